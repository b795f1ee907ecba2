"""Early stopping: stops after `patience` epochs without an improvement by more than min_delta, in the monitored
value's direction; the run still finishes normally, and a resumed run stops at the same epoch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from trainwell import fit
from trainwell._errors import ConfigError
from trainwell.cli import main
from trainwell.engine.callbacks import Callback
from trainwell.engine.early_stop import EarlyStop, early_stop_from
from trainwell.engine.trainer import Trainer


class Scripted(nn.Module, Callback):
    """A loss whose validation value each epoch is given in advance (training: plain MSE)."""

    def __init__(self, values: list[float]) -> None:
        nn.Module.__init__(self)
        self.values = values
        self.epoch = 0

    def on_epoch_start(self, trainer: Any) -> None:
        self.epoch = trainer.state.epoch

    def forward(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if torch.is_inference_mode_enabled():
            return out.sum() * 0 + self.values[self.epoch]
        return nn.functional.mse_loss(out, y)


def data() -> tuple[DataLoader, DataLoader]:
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(16, 2, generator=g), torch.randn(16, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=8), DataLoader(TensorDataset(x[:4], y[:4]), batch_size=4)


def trainer(values: list[float], *, epochs: int = 10, callbacks: list[Callback] | None = None,
            **kwargs: Any) -> Trainer:
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    loss = Scripted(values)
    train, val = data()
    return Trainer(model, loss, torch.optim.SGD(model.parameters(), lr=0.01), train, val_loader=val, epochs=epochs,
                   callbacks=[loss, *(callbacks or [])], **kwargs)


VALUES = [1.0, 0.8, 0.7, 0.75, 0.72, 0.71, 0.9, 0.6, 0.5, 0.4]  # best at epoch 3, then worse for 4 epochs


def test_stops_after_patience_epochs_without_improvement() -> None:
    t = trainer(VALUES, early_stop=EarlyStop(3))
    st = t.fit()
    assert st.epoch == 6 and st.stopped_epoch == 6 and st.best_epoch == 3
    assert st.stop_reason == ("early stop after epoch 6: val_loss has not improved by more than 0 for 3 epochs; "
                              "best epoch 3")
    assert trainer(VALUES, early_stop=EarlyStop(4)).fit().epoch == 7
    assert trainer(VALUES, early_stop=EarlyStop(5)).fit().epoch == 10  # epoch 8 improves in time


def test_min_delta_counts_only_larger_improvements() -> None:
    creeping = [4 - 0.25 * i for i in range(10)]  # better by 0.25 every epoch (exact in binary)
    assert trainer(creeping, early_stop=EarlyStop(2)).fit().stopped_epoch is None
    st = trainer(creeping, early_stop=EarlyStop(2, min_delta=0.5)).fit()
    assert st.stopped_epoch == 3 and st.best_epoch == 3  # 3.5 is 0.5 better than 4, not more; best.pt follows
    # Small steps add up: 3.75 is not 0.3 better than 4, but 3.5 is (the best at the last improvement).
    assert trainer(creeping, early_stop=EarlyStop(2, min_delta=0.3)).fit().stopped_epoch is None


def test_it_follows_the_monitored_direction() -> None:
    """val_accuracy would be maximized; here a loss monitored with mode=max: rising is improving."""
    rising = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert trainer(rising, early_stop=EarlyStop(2)).fit().stopped_epoch == 3
    assert trainer(rising, early_stop=EarlyStop(2), monitor_mode="max").fit().stopped_epoch is None


class Interrupt(Callback):
    def __init__(self, after_epoch: int) -> None:
        self.after_epoch = after_epoch
        self.saved: dict[str, Any] | None = None

    def on_epoch_end(self, trainer: Any, row: dict[str, Any]) -> None:
        if row["epoch"] == self.after_epoch:
            self.saved = trainer.state_dict()
            raise KeyboardInterrupt


def test_resume_keeps_the_patience_counter() -> None:
    stop = Interrupt(5)  # two epochs after the best: the counter is at 2 of 3
    with pytest.raises(KeyboardInterrupt):
        trainer(VALUES, early_stop=EarlyStop(3), callbacks=[stop]).fit()
    assert stop.saved is not None and stop.saved["state"]["stale_epochs"] == 2
    resumed = trainer(VALUES, early_stop=EarlyStop(3))
    resumed.load_state_dict(stop.saved)
    st = resumed.fit()
    assert st.epoch == 6 and st.stopped_epoch == 6  # as the uninterrupted run; without the counter: epoch 10


def test_off_by_default_and_the_forms_fit_takes(tmp_path: Path) -> None:
    assert trainer(VALUES).fit().epoch == 10
    assert early_stop_from(None) is None and early_stop_from(5) == EarlyStop(5)
    assert early_stop_from({"patience": 2, "min_delta": 0.1}) == EarlyStop(2, 0.1)
    for bad in (0, -1, True, {"patience": 2, "delta": 0.1}, {"patience": 2, "min_delta": -1.0}, "5"):
        with pytest.raises(ConfigError):
            early_stop_from(bad)
    train, val = data()
    result = fit(nn.Linear(2, 1), train.dataset, val.dataset, loss=nn.MSELoss(), epochs=6, lr=1e-9,
                 progress="none", early_stop={"patience": 2, "min_delta": 0.01}, out=tmp_path / "run")
    assert len(result.history) == 3  # lr 1e-9: epoch 1 is the best by more than 0.01 for good
    assert result.summary["stopped_early"] is True and result.summary["stopped_epoch"] == 3


ARGS = ["--data", "digits", "--set", "data.limit=300", "--epochs", "6", "--batch-size", "16",
        "--set", "model.channels=[4]", "--set", "model.hidden=[8]", "--lr", "1e-9", "--set", "train.scheduler=none",
        "--device", "cpu", "--no-progress", "--no-doctor"]


class CtrlC(Callback):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_end(self, trainer: Any, loss: Any) -> None:
        if trainer.state.step == self.step:
            raise KeyboardInterrupt


def test_trainwell_train_early_stop_finishes_and_resume_stops_at_the_same_epoch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    stop = ["--early-stop", "2", "--set", "train.early_stop.min_delta=0.01"]  # lr 1e-9: no epoch improves after 1
    assert main(["train", "--out", "whole", *ARGS, *stop]) == 0
    err = capsys.readouterr().err
    assert "early stop after epoch 3: val_loss has not improved by more than 0.01 for 2 epochs; best epoch 1" in err
    summary = json.loads((tmp_path / "whole" / "summary.json").read_text())
    assert summary["stopped_early"] is True and summary["stopped_epoch"] == 3 and summary["epochs"] == 3
    assert summary["test_accuracy"] is not None and (tmp_path / "whole" / "report.html").is_file()

    import trainwell.app.run as app_run

    made = app_run.folder_callbacks
    with monkeypatch.context() as mp:  # Ctrl-C in epoch 3 (15 steps an epoch), the counter at 1 of 2
        mp.setattr(app_run, "folder_callbacks", lambda *a, **k: made(*a, **k) + [CtrlC(33)])
        assert main(["train", "--out", "cut", *ARGS, *stop]) == 130
    assert main(["train", "--resume", "cut"]) == 0
    assert json.loads((tmp_path / "cut" / "summary.json").read_text())["stopped_epoch"] == 3
    capsys.readouterr()
    assert main(["train", "--resume", "cut"]) == 0  # nothing left to do
    assert "it stopped early after epoch 3" in capsys.readouterr().err

    assert main(["train", "--out", "plain", *ARGS, "--epochs", "2"]) == 0  # off by default
    assert json.loads((tmp_path / "plain" / "summary.json").read_text())["stopped_early"] is False
