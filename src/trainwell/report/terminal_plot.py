"""A curve drawn with plain characters for the terminal (no plotting library): the learning-rate range test."""

from __future__ import annotations

import math
from collections.abc import Sequence


def lr_curve_text(lrs: Sequence[float], smoothed: Sequence[float | None], *, suggestion: float | None = None,
                  width: int = 64, height: int = 12) -> str:
    """The smoothed loss against the learning rate (log scale): ``*`` the curve, ``|`` the suggestion, with the
    loss range on the left and the rates below."""
    points = [(math.log10(x), float(y)) for x, y in zip(lrs, smoothed)
              if y is not None and math.isfinite(y) and x > 0]
    if len(points) < 2:
        return "(no finite loss to draw)"
    x0, x1 = points[0][0], points[-1][0]
    low, high = min(y for _, y in points), max(y for _, y in points)
    first = points[0][1]
    if first > low:  # keep the descent readable: a diverging tail above twice its depth goes off the top
        high = min(high, first + (first - low))
    span_x, span_y = (x1 - x0) or 1.0, (high - low) or 1.0
    grid = [[" "] * width for _ in range(height)]
    if suggestion is not None and suggestion > 0:
        col = round((math.log10(suggestion) - x0) / span_x * (width - 1))
        if 0 <= col < width:
            for row in grid:
                row[col] = "|"
    for x, y in points:
        col = round((x - x0) / span_x * (width - 1))
        if y <= high:
            grid[round((high - y) / span_y * (height - 1))][col] = "*"
    label = max(len(f"{high:.3g}"), len(f"{low:.3g}"))
    lines = [" " * label + "  smoothed loss against the learning rate (log scale)"
             + ("; | the suggestion" if suggestion is not None else "")]
    for i, row in enumerate(grid):
        tag = f"{high:.3g}" if i == 0 else f"{low:.3g}" if i == height - 1 else ""
        lines.append(f"{tag:>{label}} ┤{''.join(row)}")
    left, right = f"{10 ** x0:.0e}", f"{10 ** x1:.0e}"
    lines.append(" " * label + " └" + "─" * width)
    lines.append(" " * (label + 2) + left + " " * max(1, width - len(left) - len(right)) + right)
    return "\n".join(lines)
