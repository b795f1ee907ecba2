"""Which character separates a table's columns: the one asked for, or the one its header plainly uses.

Spreadsheets in many locales save "CSV" with semicolons (the comma is their decimal point), and
a file called .csv may hold tabs. Reading such a file with commas gives one column named
``"f1;f2;label"``, and then every message about missing columns is wrong.
"""

from __future__ import annotations

SEPARATORS = (",", ";", "\t", "|")


def detect_separator(header: str, expected: str = ",") -> str:
    """``expected`` if the header line holds it; otherwise the one other separator the header holds, if exactly one."""
    if expected in header:
        return expected
    found = [s for s in SEPARATORS if s != expected and s in header]
    return found[0] if len(found) == 1 else expected


def separator_name(sep: str) -> str:
    return {"\t": "tabs", ",": "commas", ";": "semicolons", "|": "'|'"}.get(sep, repr(sep))
