"""A classification run's test-split sections of report.html: the confusion matrix and the worst mistakes.

The figures come from ``trainwell.tasks.test_errors``; this module only draws and writes them (all text escaped).
A mistake's input is shown as what it is: a picture (``kind="image"``, the raw C x H x W pixels), the feature
values (``"tabular"``) or the text (``"text"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np

from trainwell.report.html import png_img
from trainwell.report.plots import new_figure, to_png

COUNTS_UP_TO = 20  # classes: more, and the cells are too small for their counts
NAMES_UP_TO = 40  # classes: more, and the axes carry no class names
FEATURES_SHOWN = 12
TEXT_SHOWN = 240  # characters


@dataclass
class ShownMistake:
    """A wrong prediction with its classes' names and the input to show."""

    input: Any  # image: array (C, H, W); tabular: feature values; text: str
    true: str
    predicted: str
    probability: float  # of the predicted class
    true_probability: float


def confusion_plot(counts: np.ndarray, class_names: list[str]) -> bytes:
    """The confusion matrix as a PNG: true class down, predicted class across, counts in the cells for up to
    ``COUNTS_UP_TO`` classes, class names on the axes for up to ``NAMES_UP_TO``."""
    n = len(class_names)
    side = min(9.0, 3.2 + 0.35 * n)
    fig, ax = new_figure((side + 1.2, side))
    ax.grid(False)
    image = ax.imshow(counts, cmap="Blues", interpolation="nearest")
    fig.colorbar(image, ax=ax, shrink=0.8, label="test samples")
    if n <= NAMES_UP_TO:
        ax.set_xticks(range(n), [_short(c) for c in class_names], rotation=45 if n > 10 else 0, ha="right"
                      if n > 10 else "center")
        ax.set_yticks(range(n), [_short(c) for c in class_names])
    if n <= COUNTS_UP_TO:
        dark = counts.max() * 0.6 if counts.size else 0
        for (row, col), value in np.ndenumerate(counts):
            ax.text(col, row, str(value), ha="center", va="center", fontsize="small",
                    color="white" if value > dark else "black")
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    ax.set_title(f"Confusion matrix: {int(counts.sum()):,} test samples")
    return to_png(fig)


def _short(name: str, width: int = 14) -> str:
    return name if len(name) <= width else name[:width - 1] + "\u2026"


def mistakes_plot(mistakes: list[ShownMistake], scale: float) -> bytes:
    """The mistakes' pictures side by side, each titled with its true and predicted class and the probability."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from trainwell.report.plots import DPI, FIGSIZE

    fig = Figure(figsize=(FIGSIZE[0], 2.4), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, max(len(mistakes), 4), squeeze=False)[0]
    for ax in axes:
        ax.axis("off")
    for ax, m in zip(axes, mistakes):
        pixels = np.asarray(m.input, dtype=np.float64) / scale
        if pixels.shape[0] == 1:
            ax.imshow(pixels[0], cmap="gray", vmin=0.0, vmax=1.0, interpolation="nearest")
        else:
            ax.imshow(np.clip(np.moveaxis(pixels, 0, -1), 0.0, 1.0), interpolation="nearest")
        ax.set_title(f"true {_short(m.true, 10)}\npredicted {_short(m.predicted, 10)}\n{m.probability:.1%}",
                     fontsize="small")
    return to_png(fig)


def _mistakes_table(mistakes: list[ShownMistake], kind: str, features: list[str]) -> str:
    if kind == "tabular":
        names = features[:FEATURES_SHOWN] or [f"x{i}" for i in range(min(len(mistakes[0].input), FEATURES_SHOWN))]
        more = len(mistakes[0].input) > len(names)
        head = "".join(f"<th>{escape(n)}</th>" for n in names) + ("<th>\u2026</th>" if more else "")
        cells = [("".join(f"<td>{float(v):.4g}</td>" for v in list(m.input)[:len(names)])
                  + ("<td>\u2026</td>" if more else "")) for m in mistakes]
    else:
        head = '<th style="text-align:left">text</th>'
        cells = [f'<td style="text-align:left">{escape(_clip(str(m.input)))}</td>' for m in mistakes]
    rows = "".join(f"<tr><td>{escape(m.true)}</td><td>{escape(m.predicted)}</td><td>{m.probability:.1%}</td>"
                   f"<td>{m.true_probability:.1%}</td>{cell}</tr>" for m, cell in zip(mistakes, cells))
    return (f"<table><thead><tr><th>true</th><th>predicted</th><th>probability</th><th>of the true class</th>"
            f"{head}</tr></thead><tbody>{rows}</tbody></table>")


def _clip(text: str) -> str:
    return text if len(text) <= TEXT_SHOWN else text[:TEXT_SHOWN - 1] + "\u2026"


def classification_sections(counts: np.ndarray, class_names: list[str], mistakes: list[ShownMistake], *,
                            kind: str, scale: float = 1.0, features: list[str] | None = None
                            ) -> list[tuple[str, str]]:
    """(heading, html) pairs for ``write_report(extra_sections=...)``: the confusion matrix, then the
    most confident wrong predictions (pictures for images, a table of values or texts otherwise)."""
    total, right = int(counts.sum()), int(np.trace(counts))
    matrix = (f"<p>Best checkpoint on the test split: {right:,} of {total:,} right; row = true class, "
              f"column = predicted class.</p>" + png_img(confusion_plot(counts, class_names),
                                                         "confusion matrix of the test split", "square"))
    sections = [("Confusion matrix (test split)", matrix)]
    if not mistakes:
        body = "<p>No test sample was misclassified.</p>"
    else:
        intro = (f"<p>The {len(mistakes)} wrong predictions made with the highest confidence (the probability of the "
                 "predicted class): mislabelled samples and confusable classes show up here first.</p>")
        body = intro + (png_img(mistakes_plot(mistakes, scale), "most confident wrong predictions") if kind == "image"
                        else _mistakes_table(mistakes, kind, features or []))
    sections.append(("Most confident mistakes (test split)", body))
    return sections
