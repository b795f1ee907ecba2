"""The preflight (`trainwell doctor` with train options): data, shapes, trial step, overfit a tiny batch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trainwell.cli import main

CASES = Path(__file__).parent / "preflight_cases"


def _preflight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str) -> tuple[int, dict]:
    shutil.copy(CASES / "softmax_model.py", tmp_path / "softmax_model.py")
    monkeypatch.chdir(tmp_path)
    code = main(["doctor", "--lang", "en", "--json", "pre.json", "--data", "digits", "--model", model])
    return code, json.loads((tmp_path / "pre.json").read_text())


@pytest.mark.parametrize("model", ["softmax_model:SoftmaxNet", "softmax_model:DetachedNet"])
def test_broken_models_cannot_overfit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    code, report = _preflight(tmp_path, monkeypatch, model)
    assert code == 1
    assert "cannot-overfit" in [f["id"] for f in report["findings"]]
    assert report["preflight"]["overfit"]["loss"] > 0.05


@pytest.mark.parametrize("model", ["softmax_model:FixedNet", "cnn", "mlp"])
def test_working_models_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    code, report = _preflight(tmp_path, monkeypatch, model)
    assert code == 0, report["findings"]
    assert report["findings"] == []
    assert report["preflight"]["overfit"]["accuracy"] == 1.0
    counts = report["preflight"]["data"]["class_counts"]
    assert len(counts) == 10 and min(counts) > 0  # every digit is in the training split
    assert sum(counts) == report["preflight"]["data"]["sizes"]["train"]
