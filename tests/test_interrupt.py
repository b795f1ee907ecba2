"""Ctrl-C and kill -9 before the first checkpoint: the run folder survives and --resume finishes it exactly."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from conftest import train_once
from trainwell.cli import main
from trainwell.engine.callbacks import Callback

ARGS = ["--data", "digits", "--set", "data.limit=300", "--epochs", "2", "--batch-size", "16",
        "--set", "model.channels=[4]", "--set", "model.hidden=[8]", "--set", "model.dropout=0.3",
        "--device", "cpu", "--no-progress", "--no-doctor"]


class CtrlC(Callback):
    """Presses Ctrl-C after ``batches`` training batches."""

    def __init__(self, batches: int) -> None:
        self.batches = batches

    def on_train_batch_end(self, trainer: object, loss: float) -> None:
        self.batches -= 1
        if self.batches == 0:
            raise KeyboardInterrupt


def interrupt_after(monkeypatch: pytest.MonkeyPatch, batches: int) -> None:
    import trainwell.app.run as app_run

    made = app_run.folder_callbacks
    monkeypatch.setattr(app_run, "folder_callbacks", lambda *a, **k: made(*a, **k) + [CtrlC(batches)])


def weights(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "checkpoints" / "last.pt", map_location="cpu", weights_only=True)["model"]


def same_weights(a: Path, b: Path) -> bool:
    wa, wb = weights(a), weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The uninterrupted run every resumed one must equal."""
    yield train_once(tmp_path_factory, ARGS)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONHASHSEED", "0")


def test_ctrl_c_in_the_first_epoch_keeps_the_run_and_resume_finishes_it_exactly(
        full: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with monkeypatch.context() as mp:
        interrupt_after(mp, 3)
        assert main(["train", "--out", "run", *ARGS]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "trainwell train --resume run" in err
    assert (tmp_path / "run" / "config.yaml").is_file()
    assert not (tmp_path / "run" / "checkpoints" / "last.pt").exists()  # it stopped before the first save

    assert main(["train", "--resume", "run"]) == 0
    assert "Resuming run from epoch 1, step 0 (of 2 epochs)" in capsys.readouterr().err
    assert same_weights(tmp_path / "run", full)


def test_a_folder_with_only_config_yaml_resumes_from_step_0(full: Path, tmp_path: Path) -> None:
    """What kill -9 leaves before the first checkpoint."""
    (tmp_path / "killed").mkdir()
    shutil.copy(full / "config.yaml", tmp_path / "killed" / "config.yaml")
    assert main(["train", "--resume", "killed"]) == 0
    assert same_weights(tmp_path / "killed", full)
    assert (tmp_path / "killed" / "summary.json").is_file()


def test_resuming_says_from_which_epoch_and_step(full: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    steps_per_epoch = 15  # 240 training samples / batch 16
    with monkeypatch.context() as mp:
        interrupt_after(mp, steps_per_epoch + 4)  # epoch 2, after epoch 1's checkpoint
        assert main(["train", "--out", "run", *ARGS]) == 130
    capsys.readouterr()
    assert main(["train", "--resume", "run"]) == 0
    assert f"Resuming run from epoch 2, step {steps_per_epoch} (of 2 epochs)" in capsys.readouterr().err
    assert same_weights(tmp_path / "run", full)


def test_resuming_a_finished_run_says_so_and_trains_nothing(full: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (full / "summary.json").read_text(encoding="utf-8")
    assert main(["train", "--resume", str(full)]) == 0
    err = capsys.readouterr().err
    assert "is finished" in err and "nothing to resume" in err
    assert (full / "summary.json").read_text(encoding="utf-8") == before


def test_ctrl_c_while_reading_data_leaves_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before config.yaml is written there is nothing to resume: the folder is cleaned up as before."""
    import trainwell.tasks.classification as classification

    def stop(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(classification.ClassificationTask, "build_data", stop)
    assert main(["train", "--out", "run", *ARGS]) == 130
    assert not (tmp_path / "run").exists()
