"""A finished run's report.html and model card, rebuilt from the run folder's files without training.

A run stopped after summary.json (``kill -9``, a full disk) has its results but not its report; ``trainwell train
--resume`` and ``trainwell report`` rebuild what is missing. The sections that need the live run (the task's
figures, the doctor's findings) are kept by :func:`trainwell.app.run.finish_run` in ``report_sections.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainwell._errors import TrainwellError

SECTIONS = "report_sections.json"


def save_sections(run_dir: Path, sections: list[tuple[str, str]]) -> None:
    """Keep the report's sections that only the live run can compute, for a later rebuild."""
    from trainwell._files import atomic_write_json

    atomic_write_json(run_dir / SECTIONS, [{"heading": h, "html": html} for h, html in sections])


def load_sections(run_dir: Path) -> list[tuple[str, str]] | None:
    """The sections :func:`save_sections` kept, or None when the file is missing or not in its format."""
    path = run_dir / SECTIONS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, list) or not all(isinstance(s, dict) and isinstance(s.get("heading"), str)
                                             and isinstance(s.get("html"), str) for s in data):
        return None
    return [(s["heading"], s["html"]) for s in data]


def rebuild_report(run_dir: Path, lang: str = "en") -> list[str]:
    """Write ``run_dir/report.html`` from summary.json, metrics.csv, steps.csv, config.yaml and the kept sections;
    returns what could not be rebuilt (empty when nothing is missing)."""
    from trainwell.report.html import run_title, write_report
    from trainwell.report.metrics import read_steps
    from trainwell.results.folder import read_run

    run = read_run(run_dir)
    if run.summary is None:
        raise TrainwellError(f"{str(run_dir)!r} has no summary.json: the run has not finished, so there is no "
                             "report to build yet.", fix=f"finish it with `trainwell train --resume {run_dir}`")
    left_out: list[str] = []
    sections = load_sections(run_dir)
    if sections is None:
        sections = []
        left_out.append(f"the task's and the doctor's sections ({SECTIONS} is missing or unreadable; they need the "
                        "live run)")
    summary: dict[str, Any] = {k: v for k, v in run.summary.items() if not isinstance(v, (dict, list))}
    write_report(run_dir / "report.html", title=run_title(run_dir.name, lang), epochs=run.epochs,
                 steps=read_steps(run_dir / "steps.csv"), config=run.config or {}, summary=summary,
                 extra_sections=sections, lang=lang)
    return left_out


def complete_finished_run(run_dir: Path, *, say: Callable[[str], None], force: bool = False,
                          lang: str = "en") -> list[str]:
    """Rebuild a finished run's missing report.html and README.md (with ``force``, report.html and trainwell's
    own README.md even when present; a README.md someone else wrote is kept); says what it wrote and returns the
    names of the files written."""
    from trainwell.results.card import MARKER, write_card

    card = run_dir / "README.md"
    ours = card.is_file() and MARKER in card.read_text(encoding="utf-8", errors="replace")
    wanted = ["report.html"] if force or not (run_dir / "report.html").is_file() else []
    if not card.is_file() or (force and ours):
        wanted.append("README.md")
    if not wanted:
        return []
    left_out = rebuild_report(run_dir, lang) if "report.html" in wanted else []
    if "README.md" in wanted:
        write_card(run_dir)
    say(f"{run_dir}: rebuilt {' and '.join(wanted)} from the run's files"
        + (f"; left out: {'; '.join(left_out)}" if left_out else "") + ".")
    return wanted
