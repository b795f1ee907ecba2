"""The problems found in one data file, gathered so that a single error reports them all: each place (line,
column) with what is wrong there, the first few shown with the count, and the fixes they call for."""

from __future__ import annotations

from pathlib import Path

from trainwell._errors import DataError

SHOWN = 5  # problems listed in the error; the rest are counted


def names(items: list[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    quoted = [repr(i) for i in items]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


class Problems:
    """Problems of one file, each with its place; :meth:`check` raises one ``DataError`` naming them all."""

    def __init__(self, path: Path, noun: str = "problems") -> None:
        self.path = path
        self.noun = noun  # what the count counts, e.g. "bad cells"
        self.found: list[tuple[str, str, str | None]] = []  # (place, what is wrong, fix)

    def add(self, place: str, text: str, fix: str | None = None) -> None:
        self.found.append((place, text, fix))

    def __len__(self) -> int:
        return len(self.found)

    def check(self) -> None:
        """Raise the error for what was found (one problem reads as one sentence); nothing found: return."""
        if not self.found:
            return
        fixes = list(dict.fromkeys(fix for _, _, fix in self.found[:SHOWN] if fix))
        fix = "; ".join(fixes) if fixes else None
        if len(self.found) == 1:
            place, text, _ = self.found[0]
            raise DataError(f"{self.path}{', ' + place if place else ''}: {text}.", fix=fix)
        shown = self.found[:SHOWN]
        head = (f"{self.path}: {len(self.found):,} {self.noun}"
                + (f"; the first {len(shown)}:" if len(shown) < len(self.found) else ":"))
        raise DataError(head + "".join(f"\n  {place}: {text}" for place, text, _ in shown), fix=fix)
