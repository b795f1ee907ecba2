"""The command line builds only the parser of the command it names; without one (or with a misspelt one), all."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from trainwell.cli import COMMANDS, _command, build_parser


def _choices(parser: object) -> list[str]:
    return list(parser._subparsers._group_actions[0].choices)  # type: ignore[attr-defined]


def test_without_a_command_every_command_is_there() -> None:
    assert _choices(build_parser()) == [c for commands in COMMANDS.values() for c in commands]
    assert _choices(build_parser("tarin")) == _choices(build_parser())  # (a misspelt one gets "Did you mean")


@pytest.mark.parametrize("module", list(COMMANDS))
def test_a_command_named_gets_its_own_module_alone(module: str) -> None:
    for command in COMMANDS[module]:
        assert _choices(build_parser(command)) == list(COMMANDS[module])


def test_the_command_is_the_first_word_that_is_not_an_option() -> None:
    assert _command(["--debug", "doctor", "run", "train.py"]) == "doctor"
    assert _command(["lr-find", "--data", "x"]) == "lr-find"
    assert _command(["--version"]) is None and _command([]) is None


def test_doctor_run_imports_no_other_commands_module() -> None:
    code = ("import sys; from trainwell.cli import build_parser; build_parser('doctor').parse_args(['doctor', 'run', "
            "'x.py']); print(sorted(m for m in sys.modules if m.startswith('trainwell.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = ast.literal_eval(out)
    assert "trainwell.cli.doctor" in loaded
    assert not {"trainwell.cli.train", "trainwell.cli.predict", "trainwell.cli.export", "trainwell.cli.runs"} & set(loaded)
