"""split-leakage reports a validation set that shares a quarter or more of its rows with training, with the
share, even when a clean test set is evaluated too (issue 26, section 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_doctor_cases import run_doctor

CASES = Path(__file__).parent / "doctor_cases" / "split-leakage"

pytestmark = pytest.mark.usefixtures("one_thread")


def _findings(script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    return {f["id"]: f for f in run_doctor(script, tmp_path, capsys)["findings"]}


def test_index_typo_reports_the_share(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    found = _findings(CASES / "buggy_index_typo.py", tmp_path, capsys)
    leak = found["split-leakage"]
    assert leak["evidence"]["evaluated_samples"] == 400
    assert leak["evidence"]["share"] == pytest.approx(0.75)
    assert "75%" in leak["message"] and "400" in leak["message"]


def test_disjoint_slices_stay_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert "split-leakage" not in _findings(CASES / "fixed_index_typo.py", tmp_path, capsys)
