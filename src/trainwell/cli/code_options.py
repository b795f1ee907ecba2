"""``--model`` / ``--tokenizer`` for the commands that load a run or an export: a run of the user's own code
names that code again on the command line, because a file never chooses code to run (``trainwell._trust``)."""

from __future__ import annotations

import argparse


def add_code_options(p: argparse.ArgumentParser) -> None:
    """``--model`` / ``--tokenizer``: a run of the user's own code names it again when it is loaded."""
    p.add_argument("--model", metavar="PKG.MODULE:CLASS",
                   help="for a run of your own model class: name it again, exactly as in the run (a file never "
                        "chooses code to run; see docs/SECURITY.md)")
    p.add_argument("--tokenizer", metavar="PKG.MODULE:FUNCTION",
                   help="for a text run with your own tokenizer: name it again, exactly as in the run")


def typed_code(args: argparse.Namespace) -> dict[str, str]:
    """The code names given on the command line by ``add_code_options``."""
    from trainwell._trust import typed_names

    return typed_names(args.model, args.tokenizer)
