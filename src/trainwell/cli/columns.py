"""Columns of text fitted to a terminal's width, one line per row, as ``git log --oneline`` fits a line: a
column that does not fit is left out whole (and named by the caller), never squeezed or wrapped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

GAP = 2  # spaces between columns


@dataclass
class Column:
    header: str
    cells: list[str]
    rank: int = 0  # 0: always shown; the others join by rank (lower first), then by their order, while they fit
    right: bool = False  # numbers: aligned right
    styles: list[str | None] = field(default_factory=list)  # a rich style per cell, or none
    key: str = ""  # what the column is called where its heading is short (a dotted config key)

    @property
    def width(self) -> int:
        from rich.cells import cell_len

        return max([cell_len(self.header), *map(cell_len, self.cells)])


def shorten(text: str, width: int) -> str:
    """``text`` cut at its end to ``width`` terminal cells, with … where it was cut."""
    from rich.text import Text

    cut = Text(text)
    cut.truncate(max(width, 1), overflow="ellipsis")
    return cut.plain


def fit(columns: list[Column], width: int) -> tuple[list[Column], list[Column]]:
    """The columns that fit in ``width`` cells, in their order, and those left out. Every rank-0 column is
    kept; when even they do not fit, the widest is cut at its end (with …) to make room."""
    kept = [c for c in columns if c.rank == 0]
    used = sum(c.width for c in kept) + GAP * max(len(kept) - 1, 0)
    if used > width and kept:
        widest = max(kept, key=lambda c: c.width)
        room = max(widest.width - (used - width), 1)
        widest.header, widest.cells = shorten(widest.header, room), [shorten(c, room) for c in widest.cells]
        used = width
    for column in sorted((c for c in columns if c.rank > 0), key=lambda c: c.rank):
        if used + GAP + column.width <= width:
            kept.append(column)
            used += GAP + column.width
    return [c for c in columns if any(c is k for k in kept)], [c for c in columns if all(c is not k for k in kept)]


def lines(columns: list[Column], header_style: str = "bold") -> list[Any]:
    """The header line and one line per row, as rich ``Text``, each column padded to its width."""
    from rich.cells import cell_len
    from rich.text import Text

    widths = [c.width for c in columns]

    def line(cells: list[str], styles: list[str | None]) -> Text:
        out = Text(no_wrap=True, overflow="ignore")
        for i, (column, cell, style, w) in enumerate(zip(columns, cells, styles, widths)):
            pad = " " * (w - cell_len(cell))
            last = i == len(columns) - 1
            out.append(pad if column.right else "")
            out.append(cell, style=style or "")
            out.append("" if column.right or last else pad)
            out.append("" if last else " " * GAP)
        return out

    rows = len(columns[0].cells) if columns else 0
    head = line([c.header for c in columns], [header_style] * len(columns))
    return [head, *(line([c.cells[r] for c in columns], [c.styles[r] if c.styles else None for c in columns])
                     for r in range(rows))]
