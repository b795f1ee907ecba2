"""The case corpus: every buggy script yields its check id; every corrected twin yields no warning or error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CASES = Path(__file__).parent / "doctor_cases"
SCRIPTS = sorted(p for p in CASES.glob("*/*.py"))


pytestmark = pytest.mark.usefixtures("one_thread")  # the scripts are tiny: see conftest.py


def run_doctor(script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    from trainwell.cli import main

    out = tmp_path / "doctor.json"
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


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
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
    else:
        assert not serious, f"false alarm on a correct script: {[(i, found[i]['message']) for i in serious]}"
