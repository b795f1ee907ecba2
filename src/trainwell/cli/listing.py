"""``trainwell models`` and ``trainwell datasets``: what is built in."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("models", help="list the built-in models")
    p.set_defaults(func=run_models)
    p = subparsers.add_parser("datasets", help="list the built-in datasets")
    p.set_defaults(func=run_datasets)


def _table(kind: str, rows: list[tuple[str, str]], footer: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"trainwell {kind}")
    table.add_column("name", style="bold")
    table.add_column("what it is")
    for name, summary in rows:
        table.add_row(name, summary)
    console = Console()
    console.print(table)
    console.print(footer, highlight=False)


def run_models(args: argparse.Namespace) -> int:
    from trainwell.models import MODELS

    _table("models", [(e.name, e.summary) for e in MODELS],
           "Use one with --model NAME, an image library's with --model torchvision:NAME or timm:NAME (published "
           "weights: add --pretrained; docs/TRANSFER.md), a Hugging Face text classifier with --model hf:NAME_OR_PATH "
           "(docs/TEXT.md), or your own nn.Module with --model package.module:Class.")
    return 0


def run_datasets(args: argparse.Namespace) -> int:
    from trainwell.data import DATASETS

    _table("datasets", [(e.name + (":PATH" if e.meta.get("needs_path") else ""), e.summary) for e in DATASETS],
           "Use one with --data NAME (or NAME:PATH). mnist-5k is the default and works offline.")
    return 0
