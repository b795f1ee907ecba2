"""One self-contained HTML page comparing two runs: both learning curves on shared axes, the config keys
that differ and the deltas of what they measured (``trainwell diff A B --html PAGE``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from trainwell._files import atomic_write_text
from trainwell.report import plots
from trainwell.report.html import NO_DATA, png_img, format_change, format_value, render_page


@dataclass
class Curves:
    """One run as the page shows it: its label (A, B), folder, status and its rows."""

    label: str
    path: str
    status: str
    steps: list[dict[str, Any]]  # steps.csv
    epochs: list[dict[str, Any]]  # metrics.csv


def _config_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _table(head: list[str], rows: list[list[str]]) -> str:
    if not rows:
        return f'<p class="empty">{NO_DATA}</p>'
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "\n".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table>\n<thead><tr>{cells}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def render_comparison(*, runs: list[Curves], config: list[tuple[str, Any, Any]],
                      deltas: list[tuple[str, Any, Any, Any]]) -> str:
    """The page as a string. ``config``: ``(dotted key, a, b)``; ``deltas``: ``(name, a, b, b - a)``."""
    a, b = runs
    charts = [png_img(plots.compare_loss_plot([(r.label, r.steps, r.epochs) for r in runs]), "loss of both runs")]
    acc = plots.compare_accuracy_plot([(r.label, r.epochs) for r in runs])
    if acc is not None:
        charts.append(png_img(acc, "validation accuracy of both runs"))
    runs_table = _table(["", "run folder", "status"], [[r.label, r.path, r.status] for r in runs])
    config_table = (_table(["key", f"{a.label}", f"{b.label}"],
                           [[k, _config_value(va), _config_value(vb)] for k, va, vb in config])
                    if config else '<p class="empty">the two configs are the same</p>')
    delta_table = _table(["", a.label, b.label, f"change ({b.label} \u2212 {a.label})"],
                         [[name, format_value(name, va), format_value(name, vb), format_change(name, d)]
                          for name, va, vb, d in deltas])
    sections = [("Runs", runs_table), ("Results", delta_table), ("Charts", "\n".join(charts)),
                ("Config differences", config_table)]
    return render_page(f"trainwell diff: {Path(a.path).name} vs {Path(b.path).name}", sections)


def write_comparison(path: Path, *, runs: list[Curves], config: list[tuple[str, Any, Any]],
                     deltas: list[tuple[str, Any, Any, Any]]) -> Path:
    """Write the comparison page to ``path`` atomically and return ``path``."""
    path = Path(path)
    atomic_write_text(path, render_comparison(runs=runs, config=config, deltas=deltas))
    return path
