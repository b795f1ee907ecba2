"""Evaluating only on rows the model trains on, with no held-out data at all, is `no-validation` (info), not
`split-leakage` (issue 26, section 2); held-out sets that overlap training stay `split-leakage`."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_doctor_cases import run_doctor

CASES = Path(__file__).parent / "doctor_cases"

pytestmark = pytest.mark.usefixtures("one_thread")


def _findings(script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    return {f["id"]: f for f in run_doctor(script, tmp_path, capsys)["findings"]}


@pytest.mark.parametrize("name", ["buggy.py", "buggy_loader_peek.py"])
def test_training_rows_only_is_no_validation_not_a_leak(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    found = _findings(CASES / "no-validation" / name, tmp_path, capsys)
    assert "split-leakage" not in found
    finding = found["no-validation"]
    assert finding["severity"] == "info"
    assert finding["evidence"]["evaluated_samples"] == 200
    assert "random_split" in finding["fix"] or "randperm" in finding["fix"]


@pytest.mark.parametrize("name", ["buggy.py", "buggy_index_typo.py", "buggy_trained_on_all.py"])
def test_held_out_sets_that_overlap_stay_split_leakage(name: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    found = _findings(CASES / "split-leakage" / name, tmp_path, capsys)
    assert found["split-leakage"]["severity"] == "error"
    assert "no-validation" not in found


def test_no_validation_has_both_languages() -> None:
    from trainwell.doctor import checks  # noqa: F401
    from trainwell.doctor.check import CHECKS

    check = CHECKS.get("no-validation")
    assert check.severity == "info"
    assert check.text["zh"].title != check.text["en"].title
