"""Every file a README command reads exists in the repository, and the README's training commands on the
sample files run (one epoch each)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conftest import main_in

ROOT = Path(__file__).parents[1]
OUTPUTS = {"--out", "--json", "--html"}  # options naming a file the command writes
SUFFIXES = (".py", ".png", ".jpg", ".csv", ".tsv", ".txt", ".jsonl", ".yaml", ".onnx")


def readme_commands() -> list[list[str]]:
    """The command lines of README.md's bash blocks, as argument lists without comments."""
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.DOTALL)
    return [shlex.split(line, comments=True) for block in blocks for line in block.splitlines() if line.strip()]


def files_read(argv: list[str]) -> list[str]:
    """The paths a command reads: ``--data kind:PATH`` values and file-like arguments, not outputs, run folders
    (``runs/...``) or placeholders."""
    paths = []
    for before, arg in zip(["", *argv], argv):
        if before in OUTPUTS or "<" in arg or arg.startswith(("runs/", "-")):
            continue
        value = arg.split(":", 1)[1] if re.match(r"(csv|tsv|jsonl|image-folder):", arg) else arg
        if value != arg or value.endswith(SUFFIXES):
            paths.append(value)
    return paths


def test_every_file_a_readme_command_reads_exists() -> None:
    read = [(" ".join(argv), p) for argv in readme_commands() for p in files_read(argv)]
    assert len(read) >= 10, read  # the parser still finds the README's file arguments
    missing = [f"{p} (in: {command})" for command, p in read if not (ROOT / p).exists()]
    assert not missing, "README commands read files that are not in the repository:\n" + "\n".join(missing)


def test_the_checker_sees_a_missing_file() -> None:
    assert files_read(shlex.split("trainwell train --data csv:nowhere.csv --out runs/x")) == ["nowhere.csv"]
    assert files_read(shlex.split("trainwell verify runs/<run> a.png b.png")) == ["a.png", "b.png"]


@pytest.mark.slow
@pytest.mark.parametrize("argv", [a for a in readme_commands()
                                  if a[:2] == ["trainwell", "train"] and any(files_read(a))],
                         ids=lambda a: " ".join(a[2:4]))
def test_readme_training_commands_run_on_the_sample_files(argv: list[str], tmp_path: Path) -> None:
    args = [ROOT / a if (ROOT / a).exists() else a for a in argv[2:]]
    args = [f"{a.split(':', 1)[0]}:{ROOT / a.split(':', 1)[1]}" if isinstance(a, str) and re.match(
        r"(csv|tsv|jsonl|image-folder):", a) else str(a) for a in args]
    assert main_in(tmp_path, "train", *args, "--epochs", "1", "--no-progress", "--out", "run") == 0
    assert (tmp_path / "run" / "report.html").is_file()
