"""``trainwell lr-find``: the learning-rate range test on the run that `trainwell train` would start with the same
options, with the curve in the terminal and as a PNG, and a suggested rate with its reason."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from trainwell.cli.config_options import add_config_options

    p = subparsers.add_parser(
        "lr-find", help="find a learning rate: the loss while the rate grows from 1e-7 to 10",
        description="Train the run that `trainwell train` would start with these options for up to 100 steps, "
                    "with the learning rate growing exponentially, stopping once the loss diverges; print the curve "
                    "and the rate where the smoothed loss falls fastest, and write lr_find.png and lr_find.json "
                    "into --out (default runs/lr-find-<data>-<model>-<time>). `trainwell train --lr auto` does "
                    "the same and trains with the suggestion.")
    add_config_options(p)
    p.add_argument("--start-lr", type=float, default=1e-7, metavar="LR", help="the first rate (default 1e-7)")
    p.add_argument("--end-lr", type=float, default=10.0, metavar="LR", help="the last rate (default 10)")
    p.add_argument("--steps", type=int, default=100, metavar="N", help="optimizer steps of the sweep (default 100)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rich.console import Console

    from trainwell._errors import TrainwellError
    from trainwell.app.configure import resolve
    from trainwell.cli.config_options import config_flags

    if not 0 < args.start_lr < args.end_lr or args.steps < 10:
        raise TrainwellError(f"The sweep needs 0 < --start-lr < --end-lr and at least 10 steps (got {args.start_lr:g}, "
                             f"{args.end_lr:g}, {args.steps}).", fix="e.g. --start-lr 1e-7 --end-lr 10 --steps 100")
    config = resolve(file=Path(args.config) if args.config else None, flags=config_flags(args), sets=args.set)
    from trainwell.engine.run_folder import default_name, new_run_dir

    folder = new_run_dir(config.out, "lr-find-" + (config.name or default_name(config.data.name, config.model.name)))
    console = Console(stderr=True)
    console.print(f"Sweeping the learning rate from {args.start_lr:g} to {args.end_lr:g} over up to {args.steps} "
                  f"steps ({config.data.name}, {config.model.name}, {config.train.optimizer}, batch "
                  f"{config.train.batch_size}, precision {config.train.precision})", highlight=False)
    from trainwell.app.lr_find import lr_find
    from trainwell.report.terminal_plot import lr_curve_text

    result = lr_find(config, folder, start=args.start_lr, end=args.end_lr, steps=args.steps)
    console.print(lr_curve_text(result.lrs, result.smoothed, suggestion=result.suggestion), highlight=False,
                  markup=False)
    steps = len(result.losses)
    console.print(f"{steps} steps in {result.seconds:.1f} s; curve: {folder / 'lr_find.png'}", highlight=False)
    if result.suggestion is None:
        raise TrainwellError(f"The learning-rate finder has {result.reason}.",
                             fix="check that the model learns at all (`trainwell doctor` with the same options), or "
                                 "widen the sweep (--start-lr / --end-lr / --steps); meanwhile train with a --lr you "
                                 "choose")
    console.print(f"[bold]suggested learning rate[/] {result.reason}", highlight=False)
    console.print(f"train with it: trainwell train --lr {result.suggestion:.2g} (same options), or --lr auto",
                  highlight=False)
    print(folder)
    return 0
