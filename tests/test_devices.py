"""Correct on every device: checkpoints load on the CPU first, and building a model trains nothing.

This machine has no GPU. A run on another device is emulated by a ``torch.load`` that puts tensors
where ``map_location`` says, with any device other than the plain CPU standing for a GPU (the
``meta`` device: tensors without data, which ``torch.set_rng_state`` refuses just as it refuses a CUDA
tensor). The ``cuda``-marked test does the real thing where a GPU is present.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from trainwell.app.configure import resolve
from trainwell.app.run import train_from_config
from trainwell.models.cnn import CNN


def _config(out: Path, epochs: int, device: str = "cpu") -> Any:
    return resolve(flags={"data.name": "digits", "train.epochs": epochs, "train.batch_size": 128, "device": device},
                   sets=["model.channels=[8]", "model.hidden=[16]", "data.augment=none", "train.scheduler=none"])


def _emulate_another_device(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The run's device is "cpu:0" (not the plain CPU); torch.load maps anything but "cpu" to meta."""
    import trainwell.app.run as run_module

    seen: list[Any] = []
    real_load = torch.load

    def load(f: Any, map_location: Any = None, **kwargs: Any) -> Any:
        seen.append(map_location)
        ckpt = real_load(f, map_location="cpu", **kwargs)
        if str(map_location) != "cpu":
            ckpt = _to_meta(ckpt)
        return ckpt

    monkeypatch.setattr(torch, "load", load)
    monkeypatch.setattr(run_module, "resolve_device", lambda name: torch.device("cpu", 0))
    return seen


def _to_meta(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to("meta")
    if isinstance(obj, dict):
        return {k: _to_meta(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_meta(v) for v in obj)
    return obj


def test_resume_on_another_device_loads_the_checkpoint_on_the_cpu(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    train_from_config(_config(run_dir, 1), run_dir, progress=False, doctor=False)
    seen = _emulate_another_device(monkeypatch)
    result = train_from_config(_config(run_dir, 2), run_dir, resume=True, progress=False, doctor=False)
    assert result.trainer.state.epoch == 2
    assert seen and all(str(m) == "cpu" for m in seen), seen  # last.pt (resume) and best.pt (test)
    assert result.summary["test_accuracy"] is not None


def test_measuring_the_flatten_size_leaves_batch_norm_untouched() -> None:
    model = CNN((1, 8, 8), 10, [4, 8], batch_norm=True)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert norms
    for bn in norms:
        assert int(bn.num_batches_tracked) == 0
        assert torch.equal(bn.running_mean, torch.zeros_like(bn.running_mean))
        assert torch.equal(bn.running_var, torch.ones_like(bn.running_var))
    assert model.training and all(m.training for m in model.modules())


@pytest.mark.cuda
def test_resume_on_cuda_continues_exactly(tmp_path: Path) -> None:
    """Train 2 epochs on the GPU in one go, and 1 + 1 with a resume: the same weights."""
    whole, split = tmp_path / "whole", tmp_path / "split"
    whole.mkdir()
    split.mkdir()
    config = _config(whole, 2, device="cuda")
    config.deterministic = True
    reference = train_from_config(config, whole, progress=False, doctor=False).trainer.model.state_dict()
    first = _config(split, 1, device="cuda")
    first.deterministic = True
    train_from_config(first, split, progress=False, doctor=False)
    second = _config(split, 2, device="cuda")
    second.deterministic = True
    resumed = train_from_config(second, split, resume=True, progress=False, doctor=False).trainer
    assert resumed.device.type == "cuda"
    for name, value in resumed.model.state_dict().items():
        torch.testing.assert_close(value, reference[name], rtol=0, atol=0, msg=name)
