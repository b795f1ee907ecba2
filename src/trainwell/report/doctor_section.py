"""The doctor's part of report.html: its findings and the per-layer gradient norms."""

from __future__ import annotations

from html import escape
from typing import Any

from trainwell.report.html import png_img
from trainwell.report.plots import grad_norm_plot

_COLORS = {"error": "#b00020", "warning": "#9a6700", "info": "#0b5cad"}


def doctor_sections(findings: list[Any], grad_norms: list[dict[str, float]]) -> list[tuple[str, str]]:
    """(heading, html) pairs for ``write_report(extra_sections=...)``; all text escaped here."""
    if findings:
        items = "".join(
            f'<li><b style="color:{_COLORS.get(f.severity, "#000")}">{escape(f.severity)}</b> '
            f"<code>{escape(f.id)}</code>: {escape(f.title)}"
            + (f" <small>({escape(f.where)})</small>" if f.where else "")
            + f"<br>{escape(f.message)}<br><i>Fix:</i> {escape(f.fix)}</li>" for f in findings)
        body = f"<ul>{items}</ul>"
    else:
        body = "<p>No problems found by the doctor's checks.</p>"
    sections = [("Doctor", body)]
    png = grad_norm_plot(grad_norms)
    if png is not None:
        sections.append(("Gradient norms", png_img(png, "gradient norm per layer")))
    return sections
