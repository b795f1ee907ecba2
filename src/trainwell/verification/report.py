"""The embedding run's part of report.html: the test ROC curves and the verification figures."""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np

# What an embedding run below its own raw-pixel baseline says at its end, in the project's languages.
BELOW_BASELINE = {
    "en": "Below the raw-pixel baseline: the embedding's test ROC AUC is {auc:.4f}, the raw pixels' cosine "
          "similarity gets {pixels:.4f}, so this model tells identities apart worse than the pixels alone do. "
          "Train longer, with more identities or more images of each, or with augmentation (docs/EMBEDDING.md).",
    "zh": "低于原始像素基线：嵌入在测试对上的 ROC AUC 为 {auc:.4f}，原始像素的余弦相似度为 {pixels:.4f}，"
          "即该模型区分身份的能力还不如像素本身。请训练更久、使用更多身份或每个身份更多的图像，或加入数据增强"
          "（见 docs/EMBEDDING.md）。",
}


def below_baseline(figures: dict[str, Any], lang: str = "en") -> str | None:
    """The sentence for an embedding whose test AUC is below its raw-pixel baseline's, in ``lang`` (``en`` or
    ``zh``); None when it is not below, or either figure is missing."""
    auc, pixels = figures.get("test_auc"), figures.get("pixel_test_auc")
    if not isinstance(auc, (int, float)) or not isinstance(pixels, (int, float)) or auc >= pixels:
        return None
    return BELOW_BASELINE.get(lang, BELOW_BASELINE["en"]).format(auc=auc, pixels=pixels)


def baseline_entries(figures: dict[str, Any]) -> dict[str, Any]:
    """summary.json's ``below_pixel_baseline`` (and, when true, ``pixel_baseline_note``, the English sentence the
    model card repeats); nothing without both AUCs."""
    if figures.get("test_auc") is None or figures.get("pixel_test_auc") is None:
        return {}
    note = below_baseline(figures)
    return {"below_pixel_baseline": note is not None, **({"pixel_baseline_note": note} if note else {})}


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
    below = below_baseline(figures)
    warning = f"<p><strong>{escape(below)}</strong></p>" if below else ""
    table = (f"{warning}<p>{escape(note)}</p><table><tr><th></th><th>embedding</th><th>raw pixels (baseline)</th>"
             f"</tr>{body}</table>")
    from trainwell.report.html import png_img

    return [("Verification (test pairs)", table),
            ("ROC curve", png_img(roc_plot(curves), "ROC curve of test verification pairs"))]
