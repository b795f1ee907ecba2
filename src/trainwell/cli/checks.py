"""``trainwell checks``: every doctor check, its severity and what it means."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("checks", help="list the doctor's checks")
    p.add_argument("--lang", choices=["en", "zh"], help="language (default: from the locale)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from rich.console import Console
    from rich.table import Table

    from trainwell.doctor import checks as _builtin  # noqa: F401
    from trainwell.doctor.check import CHECKS
    from trainwell.doctor.lang import detect_lang, pick

    lang = detect_lang(args.lang)
    rows = [{"id": e.name, "severity": e.obj.severity, "summary": e.summary,
             "title": e.obj.text[lang].listing, "in_trainwell_loop": not e.obj.loop_only} for e in CHECKS]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    table = Table(title=f"trainwell doctor checks ({len(rows)})")
    ids = [r["id"] + ("" if r["in_trainwell_loop"] else " *") for r in rows]
    # The ids are what `doctor` findings, docs and --relax name: never cut; the descriptions wrap instead.
    table.add_column("id", style="bold", no_wrap=True, min_width=max(map(len, ids), default=2))
    table.add_column("severity", no_wrap=True)
    table.add_column("what it means", overflow="fold")
    for r, name in zip(rows, ids):
        table.add_row(name, r["severity"], r["summary"] if lang == "en" else r["title"])
    console = Console()
    console.print(table)
    console.print(pick(lang, "* judges a training loop's own code: off inside `trainwell train` and `fit`, whose loop "
                             "does it right by construction",
                       "* 检查的是训练循环本身的代码：在 `trainwell train` 和 `fit` 中关闭，因为 trainwell 的循环本身就保证了这一点"))
    return 0
