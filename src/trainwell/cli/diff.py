"""``trainwell diff RUN_A RUN_B``: the config keys that differ, the metric deltas and both learning curves."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("diff", help="compare two runs: config differences, metric deltas, learning curves",
                              description="Prints the config.yaml keys whose values differ (A -> B), the val figures "
                                          "at the best epoch, the test figures, training time and parameters of "
                                          "both runs with B minus A, and their validation curves per epoch.")
    p.add_argument("a", metavar="RUN_A")
    p.add_argument("b", metavar="RUN_B")
    p.add_argument("--html", metavar="PAGE.html", help="also write a self-contained comparison page with both runs' "
                                                       "loss and accuracy curves on shared axes")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(func=run)


def _curve_table(a: Any, b: Any) -> Any:
    """Val loss and val accuracy per epoch of both runs, in one table (the learning curves, as numbers)."""
    from rich.table import Table

    from trainwell.report.html import format_value

    by_epoch: list[dict[int, dict[str, Any]]] = [{r.get("epoch"): r for r in run.epochs} for run in (a, b)]
    keys = [k for k in ("val_loss", "val_accuracy") if any(k in r for rows in (a.epochs, b.epochs) for r in rows)]
    table = Table(title="per epoch")
    table.add_column("epoch", justify="right")
    for key in keys:
        for label in ("A", "B"):
            table.add_column(f"{label} {key}", justify="right")
    for epoch in sorted({e for rows in by_epoch for e in rows if isinstance(e, int)}):
        table.add_row(str(epoch), *[format_value(k, by_epoch[i].get(epoch, {}).get(k)) for k in keys for i in (0, 1)])
    return table


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from trainwell.report.html import format_change, format_value
    from trainwell.results.compare import compare
    from trainwell.results.folder import open_run, status_text

    a, b = open_run(Path(args.a)), open_run(Path(args.b))
    result = compare(a, b)
    if args.html:
        from trainwell.report.comparison import Curves, write_comparison
        from trainwell.report.metrics import read_steps

        curves = [Curves(label, str(r.path), status_text(r), read_steps(r.path / "steps.csv"),
                         r.epochs) for label, r in (("A", a), ("B", b))]
        try:
            write_comparison(Path(args.html), runs=curves, config=result.config,
                             deltas=[(d.name, d.a, d.b, d.change) for d in result.deltas])
        except OSError as e:
            from trainwell.engine.run_folder import cannot_write

            raise cannot_write(Path(args.html), e, "give --html a path in a folder you can write to") from None
    if args.json:
        print(json.dumps(result.to_json(), indent=2, default=str))
        return 0
    console = Console()
    for label, r in (("A", a), ("B", b)):
        console.print(f"{label}: {r.path}  ({status_text(r)})", highlight=False, markup=False)
    config = Table(title="config (A -> B)")
    for column in ("key", "A", "B"):
        config.add_column(column)
    for key, va, vb in result.config:
        config.add_row(*(escape(v if isinstance(v, str) else json.dumps(v)) for v in (key, va, vb)))
    if result.config:
        console.print(config)
    else:
        console.print("The two configs are the same.", highlight=False)
    deltas = Table(title="results")
    for column, justify in (("", "left"), ("A", "right"), ("B", "right"), ("B - A", "right")):
        deltas.add_column(column, justify=justify)
    for d in result.deltas:
        deltas.add_row(d.name, format_value(d.name, d.a), format_value(d.name, d.b), format_change(d.name, d.change))
    console.print(deltas)
    if a.epochs or b.epochs:
        console.print(_curve_table(a, b))
    if args.html:
        console.print(f"Comparison page: {args.html}", highlight=False)
    else:
        console.print("Both runs' loss and accuracy curves on shared axes: add --html PAGE.html", highlight=False)
    return 0
