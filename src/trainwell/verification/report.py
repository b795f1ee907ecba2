"""The embedding run's part of report.html: the test ROC curves and the verification figures."""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np


def roc_plot(curves: dict[str, tuple[np.ndarray, np.ndarray]]) -> bytes:
    """A PNG of true accept rate against false accept rate (log scale) for each named curve."""
    from trainwell.report.plots import FIGSIZE, legend_outside, new_figure, to_png

    fig, ax = new_figure((FIGSIZE[0], 4.2))
    for name, (far, tar) in curves.items():
        keep = far > 0
        ax.plot(far[keep], tar[keep], label=name)
    ax.axvline(0.01, color="#888", linestyle=":", linewidth=1, label="FAR = 1 %")
    ax.set_xscale("log")
    ax.set_xlim(1e-3, 1.0)
    ax.set_ylim(0.0, 1.01)
    ax.set_xlabel("false accept rate (different pairs accepted)")
    ax.set_ylabel("true accept rate")
    ax.set_title("ROC curve of the test pairs")
    legend_outside(ax)
    return to_png(fig)


def _pct(v: Any) -> str:
    return "-" if v is None else f"{100 * float(v):.2f} %"


def verification_sections(figures: dict[str, Any], curves: dict[str, tuple[np.ndarray, np.ndarray]],
                          note: str) -> list[tuple[str, str]]:
    """(heading, html) pairs for ``write_report(extra_sections=...)``; all text escaped here."""
    rows = [("ROC AUC", "test_auc", "pixel_test_auc", lambda v: "-" if v is None else f"{float(v):.4f}"),
            ("TAR at FAR = 1 %", "test_tar_at_far1", "pixel_test_tar_at_far1", _pct),
            ("verification accuracy at the threshold", "test_verify_accuracy", "pixel_test_verify_accuracy", _pct),
            ("threshold (cosine, chosen on validation pairs)", "threshold", "pixel_threshold",
             lambda v: "-" if v is None else f"{float(v):.4f}")]
    body = "".join(f"<tr><td>{escape(label)}</td><td>{escape(fmt(figures.get(a)))}</td>"
                   f"<td>{escape(fmt(figures.get(b)))}</td></tr>" for label, a, b, fmt in rows)
    table = (f"<p>{escape(note)}</p><table><tr><th></th><th>embedding</th><th>raw pixels (baseline)</th></tr>"
             f"{body}</table>")
    from trainwell.report.html import png_img

    return [("Verification (test pairs)", table),
            ("ROC curve", png_img(roc_plot(curves), "ROC curve of test verification pairs"))]
