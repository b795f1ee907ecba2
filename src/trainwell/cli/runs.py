"""``trainwell runs [DIR]``: every run folder under runs/ (or DIR) as a row, with the config values that differ."""

from __future__ import annotations

import argparse
from typing import Any

STATUS_STYLE = {"finished": "green", "interrupted": "yellow", "failed": "red", "unreadable": "red"}
# What `trainwell runs` prints, per language (column names are the keys of --json and --sort).
_WORDS: dict[str, tuple[str, str]] = {  # key: (English, Chinese)
    "none": ("No run folders (folders with config.yaml) under {dir}.", "{dir} 下没有运行文件夹（含 config.yaml 的文件夹）。"),
    "title": ("trainwell runs in {dir}", "{dir} 中的 trainwell 运行"),
    "differs": ("Config columns: the {n} config.yaml value(s) that differ between these runs. Compare two "
                "with `trainwell diff RUN_A RUN_B`.",
                "配置列：这些运行之间不同的 {n} 个 config.yaml 值。用 `trainwell diff RUN_A RUN_B` 比较两个运行。"),
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("runs", help="list the runs in runs/ (or DIR) side by side",
                              description="One row per run folder (a folder with config.yaml): name, date, data, "
                                          "model, the config values that differ between the listed runs, the val "
                                          "figures at the best epoch, the test figures, training time and status "
                                          "(finished, interrupted, failed, unreadable).")
    p.add_argument("dir", nargs="?", default="runs", metavar="DIR", help="folder of runs (default runs/)")
    p.add_argument("--sort", metavar="KEY", help="sort by a column or a dotted config key, e.g. val_accuracy "
                                                 "(metrics best first, other columns ascending)")
    p.add_argument("--reverse", action="store_true", help="reverse the --sort order")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--lang", choices=["en", "zh"], help="language (default: from the locale)")
    p.set_defaults(func=run)


def cell(column: str, value: Any) -> str:
    """A table cell: metrics as the report formats them, lists and other values as text, empty as a dash."""
    from trainwell.report.html import format_value

    if column == "time":
        return format_value("train_seconds", value)
    if column == "date" and value:
        return str(value).replace("T", " ")[:16]
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value)
    return format_value(column, value)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from trainwell._lang import detect_lang, say
    from trainwell.results.catalog import FIXED_COLUMNS, catalog, sort_rows

    lang = detect_lang(args.lang)

    cat = catalog(Path(args.dir))
    if args.sort:
        sort_rows(cat, args.sort, reverse=args.reverse)
    if args.json:
        print(json.dumps(cat.to_json(), indent=2, default=str))
        return 0
    console = Console()
    if not cat.rows:
        console.print(say(_WORDS, lang, "none", dir=args.dir), highlight=False)
        return 0
    cells = [[cell(c, row.value(c)) for c in cat.columns[:-1]] + [row.status] for row in cat.rows]
    columns = cat.columns
    natural = sum(max(len(c), *(len(r[i]) for r in cells)) + 3 for i, c in enumerate(columns)) + 1
    if cat.differing and natural > console.width:  # too wide: the differing config as key=value lines, one column
        keys = set(cat.differing)
        columns = [c for c in columns if c not in keys]
        columns.insert(len(FIXED_COLUMNS), "config (differs)")
        cells = [[*r[:len(FIXED_COLUMNS)], "\n".join(f"{k}={cell(k, row.value(k))}" for k in cat.differing
                                                      if row.status != "unreadable"),
                  *r[len(FIXED_COLUMNS) + len(keys):]] for r, row in zip(cells, cat.rows)]
    table = Table(title=say(_WORDS, lang, "title", dir=args.dir))
    for column in columns:
        table.add_column(column, style="bold" if column == "name" else None, overflow="fold",
                         no_wrap=column in ("name", "status"),
                         min_width=20 if column == "config (differs)" else None,
                         justify="right" if column in cat.metric_columns or column == "time" else "left")
    for row, values in zip(cat.rows, cells):
        table.add_row(*map(escape, values[:-1]), f"[{STATUS_STYLE.get(row.status, 'white')}]{row.status}[/]")
    console.print(table, crop=False)  # a table wider than the terminal wraps rather than losing columns
    for row in cat.rows:  # why a run is not finished, below the table so the columns stay narrow
        if row.reason:
            console.print(f"{escape(row.name)} [{STATUS_STYLE.get(row.status, 'white')}]{row.status}[/]: "
                          f"{escape(row.reason)}", highlight=False)
    if cat.differing:
        console.print(say(_WORDS, lang, "differs", n=len(cat.differing)), highlight=False)
    return 0
