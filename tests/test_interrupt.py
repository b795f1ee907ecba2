"""Ctrl-C and kill -9: the run folder survives and --resume finishes it exactly.

Ctrl-C saves last.pt at the exact step it stopped after (the first one lets the running step finish), so --resume
continues from that step; a second Ctrl-C while saving quits at once."""

from __future__ import annotations

import os
import shutil
import signal
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
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    # A shell starts a background job (``pytest &``) with SIGINT ignored, and trainwell then leaves Ctrl-C alone:
    # these tests need Python's own handler, as in a terminal.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_in_the_first_epoch_keeps_the_run_and_resume_finishes_it_exactly(
        full: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with monkeypatch.context() as mp:
        interrupt_after(mp, 3)
        assert main(["train", "--out", "run", *ARGS]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "trainwell train --resume run" in err
    assert (tmp_path / "run" / "config.yaml").is_file()
    assert (tmp_path / "run" / "checkpoints" / "last.pt").exists()  # saved at the step it stopped after

    assert main(["train", "--resume", "run"]) == 0
    assert "Resuming run from epoch 1, step 3 (of 2 epochs)" in capsys.readouterr().err
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
    assert f"Resuming run from epoch 2, step {steps_per_epoch + 4} (of 2 epochs)" in capsys.readouterr().err
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


class RealCtrlC(Callback):
    """Sends this process a real SIGINT in the middle of step ``step`` (after the optimizer step, before the
    callbacks that end it): the step must still finish, and the run stop after it."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_after_optimizer_step(self, trainer: object) -> None:
        if trainer.state.step == self.step:  # type: ignore[attr-defined]
            os.kill(os.getpid(), signal.SIGINT)


def test_a_real_ctrl_c_mid_epoch_saves_that_step_and_resume_is_bitwise_exact(
        full: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import trainwell.app.run as app_run

    made = app_run.folder_callbacks
    with monkeypatch.context() as mp:
        mp.setattr(app_run, "folder_callbacks", lambda *a, **k: [RealCtrlC(7)] + made(*a, **k))
        assert main(["train", "--out", "run", *ARGS]) == 130
    err = capsys.readouterr().err
    assert "stopping after this step" in err and "trainwell train --resume run" in err
    saved = torch.load(tmp_path / "run" / "checkpoints" / "last.pt", map_location="cpu", weights_only=True)
    assert saved["state"]["step"] == 7 and saved["state"]["batch_in_epoch"] == 7
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back
    assert main(["train", "--resume", "run"]) == 0
    assert "Resuming run from epoch 1, step 7 (of 2 epochs)" in capsys.readouterr().err
    assert same_weights(tmp_path / "run", full)


def test_ctrl_c_with_accumulation_stops_after_the_optimizer_step(tmp_path_factory: pytest.TempPathFactory,
                                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    args = [*ARGS, "--accumulate", "2"]
    whole = train_once(tmp_path_factory, args)
    with monkeypatch.context() as mp:
        interrupt_after(mp, 5)
        assert main(["train", "--out", "run", *args]) == 130
    capsys.readouterr()
    assert main(["train", "--resume", "run"]) == 0
    assert "Resuming run from epoch 1, step 5 (of 2 epochs)" in capsys.readouterr().err
    assert same_weights(tmp_path / "run", whole)


def test_a_second_ctrl_c_while_saving_quits_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import trainwell.engine.checkpointing as checkpointing

    saves: list[Path] = []
    real_save = checkpointing.atomic_save

    def save(payload: dict, path: Path) -> None:
        if len(saves) == 0:
            saves.append(path)
            os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, while last.pt is being written
        real_save(payload, path)

    with monkeypatch.context() as mp:
        mp.setattr(checkpointing, "atomic_save", save)
        mp.setattr("trainwell.app.run.folder_callbacks", _with(RealCtrlC(3)))
        assert main(["train", "--out", "run", *ARGS]) == 130
    assert saves == [Path("run") / "checkpoints" / "last.pt"]
    assert not (tmp_path / "run" / "checkpoints" / "last.pt").exists()  # the save was abandoned
    assert "trainwell train --resume run" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _with(cb: Callback):  # type: ignore[no-untyped-def]
    import trainwell.app.run as app_run

    made = app_run.folder_callbacks
    return lambda *a, **k: [cb] + made(*a, **k)
