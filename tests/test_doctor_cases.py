"""The case corpus: every buggy script yields its check id; every corrected twin yields no warning or error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CASES = Path(__file__).parent / "doctor_cases"
SCRIPTS = sorted(p for p in CASES.glob("*/*.py"))
HEADER = "# doctor: "  # a first line "# doctor: --nproc 2" gives the options of `trainwell doctor run`


def doctor_options(script: Path) -> list[str]:
    first = script.read_text(encoding="utf-8").split("\n", 1)[0]
    return first[len(HEADER):].split() if first.startswith(HEADER) else []


def _case(script: Path) -> object:
    """Multi-process cases start their own workers: slow."""
    return pytest.param(script, marks=pytest.mark.slow) if doctor_options(script) else script


pytestmark = pytest.mark.usefixtures("one_thread")  # the scripts are tiny: see conftest.py


def run_doctor(script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    from trainwell.cli import main

    out = tmp_path / "doctor.json"
    options = doctor_options(script)
    if options:  # torchrun's workers: in a process of their own, so that its environment stays there
        code = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", "--lang", "en", "--json", str(out),
                               *options, str(script)], cwd=tmp_path, capture_output=True, timeout=300).returncode
    else:
        code = main(["doctor", "run", "--lang", "en", "--json", str(out), str(script)])
    capsys.readouterr()
    report = json.loads(out.read_text())
    assert report["exit_code"] == code
    assert report["internal_errors"] == []
    return report


def test_every_check_has_a_case_and_every_case_a_check() -> None:
    from trainwell.doctor import checks  # noqa: F401
    from trainwell.doctor.check import CHECKS

    folders = {p.name for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert folders <= set(CHECKS.names()), f"case folders without a check: {folders - set(CHECKS.names())}"
    # cannot-overfit belongs to the preflight; its cases are in tests/test_preflight.py.
    missing = set(CHECKS.names()) - folders - {"cannot-overfit"}
    assert not missing, f"checks without cases: {sorted(missing)}"
    for folder in folders:
        assert list((CASES / folder).glob("buggy*.py")) and list((CASES / folder).glob("fixed*.py")), folder


@pytest.mark.parametrize("script", [_case(s) for s in SCRIPTS], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case(script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    report = run_doctor(script, tmp_path, capsys)
    found = {f["id"]: f for f in report["findings"]}
    serious = {i for i, f in found.items() if f["severity"] in ("error", "warning")}
    if script.stem.startswith("buggy"):
        expected = script.parent.name
        assert expected in found, f"{expected} not found; got {sorted(found)}"
        finding = found[expected]
        assert finding["message"] and finding["fix"]
        assert finding["where"] is None or ":" in finding["where"]
        if "--nproc" in doctor_options(script):  # the merged report names the ranks that saw it
            assert finding["ranks"] == list(range(report["world_size"])), finding["ranks"]
    else:
        assert not serious, f"false alarm on a correct script: {[(i, found[i]['message']) for i in serious]}"
