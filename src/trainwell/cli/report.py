"""``trainwell report RUN_DIR``: rebuild a finished run's report.html (and a missing model card) from its files."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("report", help="rebuild a finished run's report.html from its files",
                              description="Writes RUN_DIR/report.html again from summary.json, metrics.csv, "
                                          "steps.csv, config.yaml and report_sections.json, without training, and "
                                          "README.md (the model card) when it is missing or trainwell's own: e.g. "
                                          "after a run was killed or its disk filled up just after summary.json.")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--lang", choices=["en", "zh"], help="language of the report's headings (default: from the locale)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from trainwell._lang import detect_lang
    from trainwell.app.complete import complete_finished_run
    from trainwell.engine.run_folder import check_run_dir, hold_run_dir

    run_dir = check_run_dir(Path(args.run_dir), checkpoint=False)
    hold_run_dir(run_dir, command="trainwell report")
    complete_finished_run(run_dir, say=lambda text: print(f"trainwell: {text}", file=sys.stderr), force=True,
                          lang=detect_lang(args.lang))
    print(run_dir / "report.html")
    return 0
