"""``trainwell runs [DIR]``: every run folder under runs/ (or DIR), one line each, in columns that fit the terminal."""

from __future__ import annotations

import argparse
from typing import Any

STATUS_STYLE = {"finished": "green", "interrupted": "yellow", "failed": "red", "unreadable": "red"}
# What `trainwell runs` prints, per language (column names are the keys of --json and --sort).
_WORDS: dict[str, tuple[str, str]] = {  # key: (English, Chinese)
    "none": ("No run folders (folders with config.yaml) under {dir}.", "{dir} 下没有运行文件夹（含 config.yaml 的文件夹）。"),
    "title": ("{count} run{s} in {dir}", "{dir} 中有 {count} 个运行"),
    "left_out": ("Not shown at {width} columns: {columns} (--wide shows every column, --json every value).",
                 "终端宽 {width} 列，未显示：{columns}（--wide 显示所有列，--json 显示所有值）。"),
    "config": ("Config columns: the {count} config.yaml value(s) that differ between these runs. Compare two with "
               "`trainwell diff RUN_A RUN_B`.",
               "配置列：这些运行之间不同的 {count} 个 config.yaml 值。用 `trainwell diff RUN_A RUN_B` 比较两个运行。"),
}

# The command's help, and the words of its cells.
TEXT = {
    "help": "list the runs in runs/ (or DIR), one line each",
    "description": "One line per run folder (a folder with config.yaml): name, date, data, model, the config "
                   "values that differ between the listed runs (for the keys their tasks use), the val figures at "
                   "the best epoch, the test figures, training time and status (finished, interrupted, failed, "
                   "unreadable). The columns fit the terminal: the least important are left out, and named, "
                   "when they do not; --wide shows every one.",
    "dir": "folder of runs (default runs/)",
    "sort": "sort by a column or a dotted config key, e.g. val_accuracy (metrics best first, other columns ascending)",
    "reverse": "reverse the --sort order",
    "wide": "every column, however wide the lines get",
    "json": "print JSON instead of a table (every value of the listed columns)",
    "same": " · {values}",
    "same_value": "{column} {value}",
    "early": "{status} (early {epoch}/{planned})",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("runs", help=TEXT["help"], description=TEXT["description"])
    p.add_argument("dir", nargs="?", default="runs", metavar="DIR", help=TEXT["dir"])
    p.add_argument("--sort", metavar="KEY", help=TEXT["sort"])
    p.add_argument("--reverse", action="store_true", help=TEXT["reverse"])
    p.add_argument("--wide", action="store_true", help=TEXT["wide"])
    p.add_argument("--json", action="store_true", help=TEXT["json"])
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


def status_cell(row: Any) -> str:
    """The status column: ``finished``, or ``finished (early 9/60)`` for a run that early stopping ended."""
    if row.early:
        return TEXT["early"].format(status=row.status, epoch=row.early[0], planned=row.early[1])
    return str(row.status)


def header(column: str, cat: Any) -> str:
    """A column's heading: a config key by its last part (``lr`` for ``train.lr``) unless another listed key ends
    the same, a metric with ``acc`` for ``accuracy`` (as the epoch lines say); ``--sort`` takes either name."""
    if column in cat.differing:
        last = column.rsplit(".", 1)[-1]
        return last if sum(k.rsplit(".", 1)[-1] == last for k in cat.differing) == 1 else column
    return column.replace("_accuracy", "_acc") if column in cat.metric_columns else column


# How much each column is worth when the terminal is narrow (lower: kept first; 0: always shown).
def _rank(column: str, cat: Any) -> int:
    if column in ("name", "status"):
        return 0
    if column in cat.metric_columns:  # the task's metric (val and test) before the monitored loss
        from trainwell.results.folder import TASK_METRICS

        return 1 if column.split("_", 1)[-1] in TASK_METRICS else 3
    return {"time": 4, "data": 5, "model": 5, "date": 6}.get(column, 2)


def _columns(cat: Any, wide: bool) -> tuple[list[Any], list[str]]:
    """The table's columns and, for the title, ``data NAME`` and ``model NAME`` when every run has the same."""
    from trainwell.cli.columns import Column

    readable = [r for r in cat.rows if r.status != "unreadable"]
    same = [] if wide or not readable else [c for c in ("data", "model")
                                            if len({str(r.value(c)) for r in readable}) == 1]
    dates = [cell("date", r.date) for r in cat.rows if r.date]
    one_year = len({d[:4] for d in dates}) == 1
    columns = []
    for name in cat.columns:
        if name in same:
            continue
        if name == "status":
            cells = [status_cell(r) for r in cat.rows]
        else:
            cells = [cell(name, r.value(name)) for r in cat.rows]
        if name == "date" and one_year and not wide:  # the year once, in no column
            cells = [c[5:] if c[:4] == dates[0][:4] else c for c in cells]
        columns.append(Column(header(name, cat), cells, key=name, rank=_rank(name, cat),
                              right=name in cat.metric_columns or name == "time",
                              styles=[STATUS_STYLE.get(r.status) if name == "status" else
                                      "bold" if name == "name" else None for r in cat.rows]))
    return columns, [TEXT["same_value"].format(column=c, value=readable[0].value(c)) for c in same]


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape

    from trainwell._lang import detect_lang, say
    from trainwell.cli.columns import fit, lines
    from trainwell.results.catalog import catalog, sort_rows

    lang = detect_lang(args.lang)

    cat = catalog(Path(args.dir))
    if args.sort:
        headings = {header(c, cat): c for c in cat.columns}
        sort_rows(cat, headings.get(args.sort, args.sort), reverse=args.reverse)
    if args.json:
        print(json.dumps(cat.to_json(), indent=2, default=str))
        return 0
    console = Console(highlight=False)
    if not cat.rows:
        console.print(say(_WORDS, lang, "none", dir=args.dir), markup=False)
        return 0
    columns, same = _columns(cat, args.wide)
    shown, left_out = (columns, []) if args.wide else fit(columns, console.width)
    count = len(cat.rows)
    console.print(say(_WORDS, lang, "title", count=count, s="" if count == 1 else "s", dir=args.dir)
                  + (TEXT["same"].format(values=" · ".join(same)) if same else ""), markup=False)
    for line in lines(shown):
        line.rstrip()
        console.print(line, soft_wrap=True)
    for row in cat.rows:  # why a run did not finish, below the table so the columns stay narrow
        if row.status != "finished" and row.reason:
            console.print(f"{escape(row.name)} [{STATUS_STYLE.get(row.status, 'white')}]{row.status}[/]: "
                          f"{escape(row.reason)}")
    if left_out:
        console.print(say(_WORDS, lang, "left_out", width=console.width, columns=", ".join(c.key for c in left_out)),
                      markup=False)
    if cat.differing:
        console.print(say(_WORDS, lang, "config", count=len(cat.differing)), markup=False)
    return 0
