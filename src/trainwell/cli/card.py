"""``trainwell card RUN_DIR``: (re)write a run folder's model card, README.md, from the run's own files."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("card", help="write a run folder's model card (README.md)",
                              description="Writes RUN_DIR/README.md from config.yaml, summary.json, metrics.csv, "
                                          "env.json and doctor.json: data and splits, model, recipe, metrics, doctor "
                                          "findings, environment, known limits and how to use the model. Every run "
                                          "writes one at its end; this rewrites it, e.g. for an older run folder.")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--stdout", action="store_true", help="print the card instead of writing README.md")
    p.add_argument("--force", action="store_true", help="overwrite a README.md that trainwell did not write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trainwell.results.card import render_card, write_card
    from trainwell.results.folder import open_run

    run = open_run(args.run_dir)
    if args.stdout:
        print(render_card(run), end="")
        return 0
    run_dir = run.path
    try:
        path = write_card(run_dir, force=args.force)
    except OSError as e:
        from trainwell.engine.run_folder import cannot_write

        raise cannot_write(run_dir / "README.md", e, "use --stdout, or a run folder you can write to") from None
    print(path)
    return 0
