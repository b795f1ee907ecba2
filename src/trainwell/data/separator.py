"""Which character separates a table's columns: the one asked for, or the one its header plainly uses.

Spreadsheets in many locales save "CSV" with semicolons (the comma is their decimal point), and
a file called .csv may hold tabs. Reading such a file with commas gives one column named
``"f1;f2;label"``, and then every message about missing columns is wrong.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from trainwell._errors import DataError

SEPARATORS = (",", ";", "\t", "|")


def detect_separator(header: str, expected: str = ",") -> str:
    """``expected`` if the header line holds it; otherwise the one other separator the header holds, if exactly one."""
    if expected in header:
        return expected
    found = [s for s in SEPARATORS if s != expected and s in header]
    return found[0] if len(found) == 1 else expected


def separator_name(sep: str) -> str:
    return {"\t": "tabs", ",": "commas", ";": "semicolons", "|": "'|'"}.get(sep, repr(sep))


def csv_rows(path: Path, content: str, sep: str) -> Iterator[tuple[int, list[str]]]:
    """``(line, cells)`` for each row of a table's text, ``line`` being where the row starts (1-based).

    A row the csv module cannot read (a field longer than its limit, mostly from a quote that is never
    closed and swallows the rest of the file) is a ``DataError`` naming the file and that line."""
    reader = csv.reader(io.StringIO(content, newline=""), delimiter=sep)
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            limit = csv.field_size_limit()
            too_long = "larger than field limit" in str(e)
            raise DataError(
                f"{path}, line {start}: " + (f"a value longer than {limit:,} characters" if too_long
                                             else f"the row cannot be read ({e})") + ".",
                fix="a quote (\") that is opened but never closed makes the rest of the file one value: close it, "
                    "or remove the stray quote" if too_long else "check the quotes on that line") from None
        yield start, row
        start = reader.line_num + 1
