"""The ``trainwell`` command line. Each command lives in its own module with ``add_parser`` and ``run``.

Command modules import torch only inside ``run``, so ``trainwell --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from trainwell import __version__

# The command modules, in the order ``trainwell --help`` lists them, and the commands each adds. A command line
# that names a command builds that command's parser alone (``trainwell doctor run`` does not import the others).
COMMANDS = {"train": ("train",), "doctor": ("doctor",), "checks": ("checks",), "env": ("env",),
            "summary": ("summary",), "predict": ("predict",), "export": ("export",), "embed": ("embed",),
            "verify": ("verify",), "listing": ("models", "datasets"), "runs": ("runs",), "diff": ("diff",),
            "card": ("card",), "report": ("report",), "lr_find": ("lr-find",)}


class _Parser(argparse.ArgumentParser):
    """argparse, plus "Did you mean 'train'?" when a command or a choice is misspelt (exit code 2 as before)."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as e:
            from trainwell._registry import did_you_mean

            hint = did_you_mean(value, [str(c) for c in action.choices]) if action.choices else ""
            raise argparse.ArgumentError(action, f"{e.message}.{hint}" if hint else e.message) from None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: with every command, or only ``command``'s when it names one."""
    parser = _Parser(
        prog="trainwell",
        description="Train PyTorch models the way experienced practitioners do.",
        epilog="Start with `trainwell train` (the built-in mnist-5k digits, on CPU in about a minute).")
    parser.add_argument("--version", action="version", version=f"trainwell {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = [m for m, commands in COMMANDS.items() if command in commands]
    for name in named or COMMANDS:
        importlib.import_module(f"trainwell.cli.{name}").add_parser(sub)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The command the command line names: its first word that is not an option (the top-level options take
    no values)."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(_command(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from trainwell._errors import TrainwellError
    from trainwell._files import write_failure
    from trainwell.engine.run_lock import release_all

    try:
        code = int(args.func(args) or 0)
    except (TrainwellError, OSError) as e:
        error = e if isinstance(e, TrainwellError) else write_failure("", e)  # a full disk is no bug either
        if error is None or args.debug:
            raise
        print(f"trainwell: error: {error}", file=sys.stderr)
        code = error.exit_code
    except KeyboardInterrupt:
        print("trainwell: interrupted.", file=sys.stderr)
        code = 130
    finally:
        release_all()  # the run folders this command locked (a kill -9 leaves a lock the next run takes over)
    distributed = sys.modules.get("trainwell.engine.distributed")
    if distributed is not None and distributed.joined_here:
        distributed.leave(code)  # a torchrun worker: ends here, before the interpreter's teardown
    return code


if __name__ == "__main__":
    sys.exit(main())
