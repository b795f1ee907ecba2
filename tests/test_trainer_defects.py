"""Engine defects of "correct on every device": monitor, EMA with tied weights, step logs, host syncs, cleanup."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from rich.console import Console
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, TensorDataset

import trainwell
from trainwell._errors import TrainwellError
from trainwell.data.loading import EpochLoader
from trainwell.engine.callbacks import Callback
from trainwell.engine.checkpoint import load_checkpoint
from trainwell.engine.checkpointing import Checkpointer
from trainwell.engine.trainer import StopTraining, Trainer


def _data(n: int = 256) -> tuple[TensorDataset, TensorDataset]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 10, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    return TensorDataset(x[: n - 64], y[: n - 64]), TensorDataset(x[n - 64:], y[n - 64:])


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))


def _loader(n: int, batch: int = 8) -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 10, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=batch)


# --- 4: the monitored value and its direction ------------------------------------------------------


def test_a_monitor_that_is_not_logged_is_an_error_naming_the_logged_values() -> None:
    train, val = _data()
    with pytest.raises(TrainwellError, match="val_accuracy") as info:
        trainwell.fit(_model(), train, val, epochs=1, progress="none", device="cpu", monitor="val_acc")
    assert "val_acc" in str(info.value) and info.value.fix


def test_val_auc_on_classification_is_an_error() -> None:
    train, val = _data()
    with pytest.raises(TrainwellError, match="val_auc"):
        trainwell.fit(_model(), train, val, epochs=1, progress="none", device="cpu", monitor="val_auc")


def test_accuracy_is_maximized_without_a_mode_and_an_explicit_mode_is_honoured() -> None:
    train, val = _data()
    result = trainwell.fit(_model(), train, val, epochs=3, lr=0.05, progress="none", device="cpu",
                           monitor="val_accuracy")
    accs = [r["val_accuracy"] for r in result.history]
    assert result.best_epoch == 1 + accs.index(max(accs))
    worst = trainwell.fit(_model(), train, val, epochs=3, lr=0.05, progress="none", device="cpu",
                          monitor="val_accuracy", mode="min")
    assert worst.best_epoch == 1 + accs.index(min(accs))
    losses = [r["train_loss"] for r in result.history]
    highest = trainwell.fit(_model(), train, val, epochs=3, lr=0.05, progress="none", device="cpu",
                            monitor="train_loss", mode="max")
    assert highest.best_epoch == 1 + losses.index(max(losses))


def test_a_metric_without_a_known_direction_needs_a_mode() -> None:
    class Mean:
        def __init__(self) -> None:
            self.total, self.n = 0.0, 0

        def update(self, output: Any, target: Any) -> None:
            self.total += float(output.mean()) * len(target)
            self.n += len(target)

        def compute(self) -> dict[str, float]:
            return {"score": self.total / self.n}

    def trainer(mode: str) -> Trainer:
        model = _model()
        return Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), 0.1), _loader(32),
                       val_loader=_loader(16), epochs=2, monitor="val_score", monitor_mode=mode, metric=Mean)

    with pytest.raises(TrainwellError, match="val_score") as info:
        trainer("auto").fit()
    assert "mode" in (info.value.fix or "")
    state = trainer("max").fit()
    scores = [r["val_score"] for r in state.history]
    assert state.best_epoch == 1 + scores.index(max(scores))


def test_the_verification_metric_declares_auc_and_tar_maximized() -> None:
    from trainwell.engine.trainer import Accuracy
    from trainwell.verification.metric import VerificationMetric

    assert VerificationMetric(10, 0).direction("auc") == "max"
    assert VerificationMetric(10, 0).direction("tar_at_far1") == "max"
    assert Accuracy().direction("accuracy") == "max" and Accuracy().direction("accuracy_digit") == "max"
    assert Accuracy().direction("auc") is None


# --- 2: EMA with tied weights --------------------------------------------------------------------


class Tied(nn.Module):
    """An encoder and a decoder that share one weight (as tied embeddings do)."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Linear(10, 10)
        self.dec = nn.Linear(10, 2)
        self.mid = nn.Linear(10, 10, bias=False)
        self.mid.weight = self.enc.weight  # tied

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dec(torch.relu(self.mid(torch.relu(self.enc(x)))))


def _tied_run(ema: bool) -> tuple[Trainer, Any]:
    from trainwell.engine.ema import Ema

    torch.manual_seed(0)
    model = Tied()
    average = Ema(0.9) if ema else None
    trainer = Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), 0.1), _loader(64),
                      val_loader=_loader(16), epochs=3, callbacks=[average] if average else [])
    trainer.fit()
    return trainer, average


def test_ema_with_tied_weights_keeps_training_the_trained_weights() -> None:
    averaged, ema = _tied_run(ema=True)  # validates on the average: swaps in and out every epoch
    plain, _ = _tied_run(ema=False)
    for name, value in plain.model.state_dict().items():
        assert torch.equal(averaged.model.state_dict()[name], value), name
    assert not torch.equal(ema.shadow["enc.weight"], plain.model.enc.weight)
    assert ema.shadow["mid.weight"] is ema.shadow["enc.weight"]  # one average for the shared weight
    before = {k: v.clone() for k, v in averaged.model.state_dict().items()}
    ema.swap(averaged)
    assert not torch.equal(averaged.model.enc.weight, before["enc.weight"])  # the average is in
    ema.swap(averaged)
    assert all(torch.equal(before[k], v) for k, v in averaged.model.state_dict().items())
    assert averaged.model.mid.weight is averaged.model.enc.weight


# --- 8: a loader without len() ------------------------------------------------------------------


class Stream(IterableDataset):
    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        g = torch.Generator().manual_seed(0)
        for _ in range(40):
            x = torch.randn(10, generator=g)
            yield x, (x[0] > 0).long()


@pytest.mark.parametrize("scheduler", ["onecycle", "cosine"])
def test_a_step_schedule_over_a_loader_without_len_needs_steps_per_epoch(scheduler: str) -> None:
    with pytest.raises(TrainwellError, match="steps_per_epoch") as info:
        trainwell.fit(_model(), DataLoader(Stream(), batch_size=8), epochs=2, scheduler=scheduler,
                      progress="none", device="cpu")
    assert "steps_per_epoch" in (info.value.fix or "")
    result = trainwell.fit(_model(), Stream(), epochs=2, batch_size=8, scheduler=scheduler, steps_per_epoch=5,
                           lr=0.1, progress="none", device="cpu")
    lrs = [r["lr"] for r in result.steps]
    assert len(lrs) == 10 and lrs[-1] < 0.02  # annealed over the whole run, not climbing back
    assert all(b <= a for a, b in zip(lrs[4:], lrs[5:]))
    with pytest.raises(TrainwellError, match="steps_per_epoch=5"):  # a wrong count is caught after one epoch
        trainwell.fit(_model(), Stream(), epochs=2, batch_size=8, scheduler=scheduler, steps_per_epoch=4,
                      progress="none", device="cpu")


# --- 9: per-step rows live in steps.csv, not in checkpoints ---------------------------------------


def _folder_trainer(run_dir: Path, n: int, *, epochs: int = 1, stop_at: int | None = None,
                    every: int | None = None) -> Trainer:
    from trainwell.app.run import folder_callbacks

    class Stop(Callback):
        def on_train_batch_end(self, trainer: Trainer, loss: Any) -> None:
            if stop_at is not None and trainer.state.step == stop_at:
                raise StopTraining

    run_dir.mkdir(exist_ok=True)
    torch.manual_seed(0)
    model = _model()
    cbs = folder_callbacks(run_dir, checkpoint_every=every, log_every=4, extra={})
    loader = EpochLoader(_loader(n).dataset, batch_size=2, shuffle=True, seed=0)  # resumes mid-epoch
    return Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), 0.05), loader,
                   epochs=epochs, log_every=4, callbacks=[*cbs, Stop()])


def test_checkpoints_do_not_grow_with_the_number_of_steps(tmp_path: Path) -> None:
    _folder_trainer(tmp_path / "a", 20).fit()  # 10 steps
    _folder_trainer(tmp_path / "b", 200).fit()  # 100 steps
    a, b = (tmp_path / name / "checkpoints" / "last.pt" for name in "ab")
    assert abs(a.stat().st_size - b.stat().st_size) < 200
    assert "steps" not in load_checkpoint(b)["state"]


def _steps_csv(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "steps.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def test_steps_csv_has_every_step_once_after_a_resume(tmp_path: Path) -> None:
    full = _folder_trainer(tmp_path / "full", 40, epochs=2, every=3)
    full.fit()
    cut = _folder_trainer(tmp_path / "cut", 40, epochs=2, every=3, stop_at=26)  # last.pt at step 24
    cut.fit()
    assert [int(r["step"]) for r in _steps_csv(tmp_path / "cut")] == list(range(1, 27))
    resumed = _folder_trainer(tmp_path / "cut", 40, epochs=2, every=3)
    resumed.load_state_dict(load_checkpoint(tmp_path / "cut" / "checkpoints" / "last.pt"))
    assert resumed.state.step == 24
    resumed.fit()
    assert _steps_csv(tmp_path / "cut") == _steps_csv(tmp_path / "full")
    assert [int(r["step"]) for r in _steps_csv(tmp_path / "full")] == list(range(1, 41))


def test_fit_result_steps_and_the_report_come_from_the_steps_file(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import trainwell.report.html
    from trainwell.report.metrics import read_steps

    reported: dict[str, Any] = {}
    write_report = trainwell.report.html.write_report
    monkeypatch.setattr(trainwell.report.html, "write_report",
                        lambda path, **kw: (reported.update(kw), write_report(path, **kw)))
    train, val = _data()
    kept = trainwell.fit(_model(), train, val, epochs=2, progress="none", device="cpu")
    saved = trainwell.fit(_model(), train, val, epochs=2, progress="none", device="cpu", out=tmp_path / "f")
    assert [r["step"] for r in kept.steps] == list(range(1, 7))
    assert kept.steps == saved.steps == read_steps(saved.run_dir / "steps.csv") == reported["steps"]


# --- 10: a callback failing at the start still lets every started callback clean up -------------


def test_a_failing_on_fit_start_uninstalls_the_doctors_patches() -> None:
    from trainwell.doctor.callback import DoctorCallback

    cross_entropy, backward = torch.nn.functional.cross_entropy, torch.Tensor.backward

    class Broken(Callback):
        def on_fit_start(self, trainer: Trainer) -> None:
            raise RuntimeError("broken callback")

    model = _model()
    trainer = Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), 0.1), _loader(16),
                      callbacks=[DoctorCallback(show=False), Broken()])
    with pytest.raises(RuntimeError, match="broken callback"):
        trainer.fit()
    assert torch.nn.functional.cross_entropy is cross_entropy
    assert torch.Tensor.backward is backward


# --- 11: host syncs per step ----------------------------------------------------------------------

SYNCS = ("item", "__float__", "__bool__", "__int__", "tolist", "__index__", "__format__")


def _count_syncs(monkeypatch: pytest.MonkeyPatch, run: Any) -> int:
    count = 0

    def counting(name: str) -> Any:
        original = getattr(torch.Tensor, name)

        def wrapper(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            nonlocal count
            count += 1
            return original(self, *args, **kwargs)

        return wrapper

    for name in SYNCS:
        monkeypatch.setattr(torch.Tensor, name, counting(name))
    run()
    return count


@pytest.mark.parametrize("accumulate", [1, 4])  # micro-batch weights by counted targets stay on the device
def test_the_training_loop_reads_the_loss_once_per_log_every_steps(monkeypatch: pytest.MonkeyPatch,
                                                                   accumulate: int) -> None:
    from trainwell.engine.progress import ProgressBar

    model = _model()
    loader = _loader(200 * accumulate, 4)  # 50 steps
    trainer = Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), 0.1, momentum=0.9),
                      loader, epochs=1, log_every=10, accumulate=accumulate,
                      callbacks=[ProgressBar(Console(file=io.StringIO()))])
    syncs = _count_syncs(monkeypatch, trainer.fit)
    assert trainer.state.step == 50
    assert syncs <= 50 // 10 + 2, f"{syncs} host syncs in 50 steps"


# --- 14: progress modes -----------------------------------------------------------------------------


def test_fit_without_a_bar_prints_one_line_per_epoch_and_none_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    train, val = _data()
    trainwell.fit(_model(), train, val, epochs=2, progress=False, device="cpu")
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("epoch")]
    assert len(lines) == 2 and "train_loss" in lines[0] and "val_loss" in lines[0] and "val_acc" in lines[0]
    trainwell.fit(_model(), train, val, epochs=2, progress="none", device="cpu")
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    with pytest.raises(TrainwellError, match="progress"):
        trainwell.fit(_model(), train, val, progress="quiet", device="cpu")  # type: ignore[arg-type]


def test_train_with_no_progress_prints_one_line_per_epoch(tmp_path: Path) -> None:
    from trainwell.app.run import train_from_config
    from trainwell.config import Config

    config = Config.model_validate({"data": {"name": "digits", "limit": 200}, "model": {"name": "mlp", "hidden": [16]},
                                    "train": {"epochs": 2}, "device": "cpu"})
    out = io.StringIO()
    (tmp_path / "run").mkdir()
    train_from_config(config, tmp_path / "run", progress=False, console=Console(file=out, width=200), doctor=False)
    lines = [line for line in out.getvalue().splitlines() if line.startswith("epoch")]
    assert len(lines) == 2 and "train_loss" in lines[1] and "s" in lines[1].split()[-1]
    assert math.isfinite(float(lines[0].split("train_loss")[1].split()[0]))
