"""Precision plugins on the CPU: bf16-mixed and 16-mixed train, fp16 overflows skip and are counted,
gradients are unscaled before clipping and callbacks, and fp16 resume is bitwise exact."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset

import trainwell
from trainwell._errors import TrainwellError
from trainwell.data.loading import EpochLoader
from trainwell.engine.callbacks import Callback
from trainwell.engine.checkpoint import load_checkpoint
from trainwell.engine.precision import FP16Mixed, precision_plugin
from trainwell.engine.trainer import StopTraining, Trainer


def _data(n: int = 192) -> TensorDataset:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 12, generator=g)
    return TensorDataset(x, (x[:, 0] - x[:, 1] > 0).long() + (x[:, 2] > 1).long())


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))


@pytest.mark.parametrize("precision,dtype", [("32", torch.float32), ("bf16-mixed", torch.bfloat16),
                                             ("16-mixed", torch.float16)])
def test_each_precision_trains_with_its_autocast_dtype(precision: str, dtype: torch.dtype) -> None:
    model = _model()
    seen: list[torch.dtype] = []
    model[0].register_forward_hook(lambda m, i, out: seen.append(out.dtype))
    result = trainwell.fit(model, _data(), epochs=4, batch_size=16, lr=1e-2, precision=precision,  # type: ignore[arg-type]
                           progress="none", device="cpu")
    assert seen[0] == dtype
    first, last = result.history[0]["train_loss"], result.history[-1]["train_loss"]
    assert last < 0.6 * first, (first, last)
    assert next(model.parameters()).dtype == torch.float32  # the weights stay float32
    if precision == "16-mixed":
        assert result.history[-1]["skipped_steps"] == 0 and result.history[-1]["loss_scale"] > 0


def test_an_unknown_precision_names_the_choices() -> None:
    with pytest.raises(TrainwellError, match="16-mixed"):
        precision_plugin("fp8", torch.device("cpu"))


def test_precision_32_may_be_written_as_a_number() -> None:
    from trainwell.app.configure import resolve

    assert resolve(sets=["train.precision=32"]).train.precision == "32"  # YAML reads 32 as an int
    assert resolve(sets=["train.precision=bf16-mixed"]).train.precision == "bf16-mixed"
    with pytest.raises(TrainwellError, match="precision"):
        resolve(sets=["train.precision=16"])


class _Counts(Callback):
    def __init__(self) -> None:
        self.steps = 0
        self.norms: list[float] = []

    def on_fit_start(self, trainer: Trainer) -> None:
        trainer.optimizer.register_step_post_hook(lambda *_: setattr(self, "steps", self.steps + 1))

    def on_before_optimizer_step(self, trainer: Trainer) -> None:
        self.norms.append(float(torch.cat([p.grad.flatten() for p in trainer.model.parameters()]).norm()))


def test_an_fp16_overflow_skips_the_step_and_is_counted_in_metrics_csv(tmp_path: Path) -> None:
    from trainwell.report.metrics import CsvLogger

    model = _model()
    counts = _Counts()
    loader = EpochLoader(_data(), batch_size=16, shuffle=True, seed=0)
    # A loss scale of 2**24 overflows float16's range (65504) in the backward pass: the first steps must skip.
    trainer = Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), 0.1), loader, epochs=2,
                      precision=FP16Mixed(torch.device("cpu"), init_scale=2.0**24),
                      callbacks=[counts, CsvLogger(tmp_path / "metrics.csv")])
    trainer.fit()
    first, second = trainer.state.history
    assert first["skipped_steps"] >= 1 and second["skipped_steps"] == 0
    assert counts.steps == trainer.state.step - first["skipped_steps"]  # skipped steps never reached the optimizer
    assert first["loss_scale"] == 2.0**24 / 2 ** first["skipped_steps"]  # halved on every overflow
    assert all(torch.isfinite(p).all() for p in model.parameters())
    rows = list(csv.DictReader((tmp_path / "metrics.csv").open()))
    assert rows[0]["skipped_steps"] == str(first["skipped_steps"]) and float(rows[0]["loss_scale"]) > 0


def test_gradients_are_unscaled_before_clipping_and_callbacks() -> None:
    norms = {}
    for precision in ("32", "16-mixed"):
        model = _model()
        counts = _Counts()
        loader = EpochLoader(_data(16), batch_size=16, shuffle=False, seed=0)
        Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), 0.0), loader, epochs=1,
                precision=precision, grad_clip=1e6, callbacks=[counts]).fit()
        norms[precision] = counts.norms[0]
    assert norms["16-mixed"] == pytest.approx(norms["32"], rel=1e-2)  # the true size, not 65536 times it


def _resumable(run_dir: Path, *, stop_at: int | None = None, accumulate: int = 1) -> Trainer:
    from trainwell.app.run import folder_callbacks

    class Stop(Callback):
        def on_train_batch_end(self, trainer: Trainer, loss: Any) -> None:
            if trainer.state.step == stop_at:
                raise StopTraining

    run_dir.mkdir(exist_ok=True)
    model = _model()
    loader = EpochLoader(_data(), batch_size=16, micro_batch_size=16 // accumulate, shuffle=True, seed=0)
    return Trainer(model, nn.CrossEntropyLoss(), torch.optim.Adam(model.parameters(), 1e-2), loader, epochs=2,
                   accumulate=accumulate,
                   precision=FP16Mixed(torch.device("cpu"), init_scale=2.0**30),
                   callbacks=[*folder_callbacks(run_dir, checkpoint_every=3, log_every=4, extra={}), Stop()])


@pytest.mark.parametrize("accumulate", [1, 4])
def test_fp16_resume_mid_epoch_is_bitwise_exact(tmp_path: Path, accumulate: int) -> None:
    full = _resumable(tmp_path / "full", accumulate=accumulate)
    full.fit()
    assert full.state.history[0]["skipped_steps"] > 3  # the loss scale still changes after the cut
    _resumable(tmp_path / "cut", stop_at=4, accumulate=accumulate).fit()  # last.pt at step 3, mid-epoch
    resumed = _resumable(tmp_path / "cut", accumulate=accumulate)
    resumed.load_state_dict(load_checkpoint(tmp_path / "cut" / "checkpoints" / "last.pt"))
    assert resumed.state.step == 3
    resumed.fit()
    a, b = full.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [r["train_loss"] for r in full.state.history] == [r["train_loss"] for r in resumed.state.history]
    assert [r["skipped_steps"] for r in full.state.history] == [r["skipped_steps"] for r in resumed.state.history]


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["16-mixed", "bf16-mixed"])
def test_train_mixed_precision_with_accumulation_keeps_the_doctor_quiet(tmp_path: Path, precision: str) -> None:
    import json
    import os

    from trainwell.cli import main

    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert main(["train", "--out", "run", "--set", "data.limit=300", "--set", "model.channels=[8,16]",
                     "--set", "model.hidden=[32]", "--epochs", "2", "--no-progress", "--precision", precision,
                     "--accumulate", "4"]) == 0
    finally:
        os.chdir(old)
    run = tmp_path / "run"
    assert json.loads((run / "doctor.json").read_text())["findings"] == []  # it sees the true micro-batch losses
    rows = list(csv.DictReader((run / "metrics.csv").open()))
    assert float(rows[-1]["train_loss"]) < float(rows[0]["train_loss"])
    assert ("skipped_steps" in rows[0]) == (precision == "16-mixed") and "data_wait" in rows[0]
    config = (run / "config.yaml").read_text()
    assert f"precision: {precision}" in config and "accumulate: 4" in config


def test_the_doctor_sees_each_micro_batchs_own_loss_not_a_scaled_or_weighted_one() -> None:
    from trainwell.doctor.callback import DoctorCallback

    model = _model()
    doctor = DoctorCallback(show=False)
    loader = EpochLoader(_data(), batch_size=32, micro_batch_size=8, shuffle=True, seed=0)
    Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), 0.0), loader, epochs=1,
            precision="16-mixed", accumulate=4, callbacks=[doctor]).fit()
    assert doctor.session is not None
    seen = doctor.session.losses
    x, y = _data()[loader.plan()[0].indices]
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.float16):
        first = float(nn.functional.cross_entropy(model(x), y))
    assert len(seen) == 24 and seen[0] == pytest.approx(first, rel=1e-3)  # 6 steps x 4 micro-batches


@pytest.mark.cuda
@pytest.mark.parametrize("precision", ["bf16-mixed", "16-mixed"])
def test_mixed_precision_trains_on_a_gpu(precision: str) -> None:
    result = trainwell.fit(_model(), _data(), epochs=4, batch_size=16, lr=1e-2, precision=precision,  # type: ignore[arg-type]
                           accumulate=2, progress="none", device="cuda")
    assert result.history[-1]["train_loss"] < 0.6 * result.history[0]["train_loss"]


def test_fp16_leaves_no_hook_on_the_optimizer() -> None:
    """Each 16-mixed plugin (the lr finder's, the batch search's, the run's) watched for skipped steps with a
    post-hook it left on the user's optimizer: they piled up, each holding its plugin. A skip is still seen."""
    from trainwell.engine.precision import FP16Mixed

    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        plugin = FP16Mixed(torch.device("cpu"))
        with plugin.autocast():
            loss = model(torch.randn(4, 3)).float().pow(2).mean()
        plugin.backward(loss)
        assert plugin.step(optimizer)
        optimizer.zero_grad()
    assert not optimizer._optimizer_step_post_hooks
    model.weight.grad = torch.full_like(model.weight, float("inf"))  # an overflow: the scaler skips the step
    model.bias.grad = torch.zeros_like(model.bias)
    assert not plugin.step(optimizer) and plugin.skipped == 1


def test_bf16_asks_the_runs_own_gpu_and_refuses_emulation(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Turing GPU (7.5) as cuda:1 beside an Ampere cuda:0 (the current one): bf16-mixed on cuda:1 is refused
    (it asked the current GPU, and accepted bfloat16 that is only emulated). (No GPU here: torch.cuda's answers
    about the two are given.)"""
    from trainwell._errors import ConfigError
    from trainwell.engine.precision import BF16Mixed

    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability",
                        lambda device=None: (8, 0) if torch.device(device).index in (0, None) else (7, 5))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Tesla T4")
    with pytest.raises(ConfigError, match="Tesla T4 has no bfloat16 support"):
        BF16Mixed(torch.device("cuda", 1))
    BF16Mixed(torch.device("cuda", 0))  # the Ampere one is fine


def test_the_precision_names_are_written_once_and_each_has_its_plugin() -> None:
    """config.py, the CLI and fit() read trainwell._spread.PRECISIONS; each name has its plugin, and no plugin is
    registered under a name they would refuse."""
    import inspect
    import typing

    from trainwell import _spread
    from trainwell.app import fit as fit_module
    from trainwell.cli import build_parser
    from trainwell.config import TrainConfig
    from trainwell.engine.precision import PRECISIONS

    assert sorted(PRECISIONS.names()) == sorted(_spread.PRECISIONS)
    assert typing.get_args(TrainConfig.model_fields["precision"].annotation) == _spread.PRECISIONS
    assert inspect.signature(fit_module.fit).parameters["precision"].annotation == "PrecisionName"
    assert fit_module.PrecisionName is _spread.PrecisionName
    train = next(a for a in build_parser()._subparsers._group_actions[0].choices["train"]._actions
                 if a.dest == "precision")
    assert tuple(train.choices) == _spread.PRECISIONS
