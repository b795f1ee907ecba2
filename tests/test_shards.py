"""Sharded checkpoints (``trainwell.engine.shards``), in one process: what is saved is what is loaded (weights and
optimizer state, exactly), a killed save leaves the previous checkpoint whole, reading unpickles nothing, and
another model's checkpoint is refused by name. (Several processes: tests/test_fsdp.py.)"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
import torch
from torch import nn

from trainwell._errors import TrainwellError
from trainwell.engine import shards
from trainwell.engine.shards import SHARDS, TRAINER, last_checkpoint, load_shards, remove_leftovers, save_shards


def _trained(seed: int, steps: int = 3) -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(8, 6)).pow(2).mean().backward()
        optimizer.step()
    return model, optimizer


def _save(folder: Path, model: nn.Module, optimizer: torch.optim.Optimizer, step: int = 3) -> None:
    tensors, rest = shards.sharded_state(model, optimizer)
    save_shards(folder, tensors, {"format": "trainwell-checkpoint/1", "state": {"step": step}, **rest}, main=True,
                barrier=lambda: None)


def _one_step(model: nn.Module, optimizer: torch.optim.Optimizer) -> torch.Tensor:
    torch.manual_seed(99)
    optimizer.zero_grad()
    model(torch.randn(8, 6)).pow(2).mean().backward()
    optimizer.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_what_is_saved_is_what_is_loaded_and_training_goes_on_the_same(tmp_path: Path) -> None:
    model, optimizer = _trained(0)
    folder = tmp_path / SHARDS
    _save(folder, model, optimizer)
    assert (folder / TRAINER).is_file() and len(list(folder.glob("*.safetensors"))) == 1
    assert not (folder / ".metadata").exists()  # torch.distributed.checkpoint's pickled metadata is not written

    other, other_optimizer = _trained(1, steps=5)
    rest = load_shards(folder, other, other_optimizer)
    assert rest["state"] == {"step": 3}
    for (name, a), b in zip(model.state_dict().items(), other.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    before, after = optimizer.state_dict(), other_optimizer.state_dict()
    assert before["param_groups"] == after["param_groups"]
    for index, entries in before["state"].items():
        for key, value in entries.items():
            assert torch.equal(value, after["state"][index][key]), (index, key)
    assert torch.equal(_one_step(model, optimizer), _one_step(other, other_optimizer))


def test_read_model_puts_the_whole_state_dict_together(tmp_path: Path) -> None:
    model, optimizer = _trained(0)
    _save(tmp_path / SHARDS, model, optimizer)
    ckpt = shards.read_model(tmp_path / SHARDS)
    assert ckpt["state"] == {"step": 3} and ckpt["model"].keys() == model.state_dict().keys()
    for name, value in model.state_dict().items():
        assert torch.equal(ckpt["model"][name], value), name


def test_a_checkpoint_saved_before_the_first_step_has_no_optimizer_state(tmp_path: Path) -> None:
    model, optimizer = _trained(0, steps=0)
    _save(tmp_path / SHARDS, model, optimizer, step=0)
    assert not optimizer.state  # saving made none
    other, other_optimizer = _trained(1)
    load_shards(tmp_path / SHARDS, other, other_optimizer)
    assert not other_optimizer.state
    assert torch.equal(_one_step(model, optimizer), _one_step(other, other_optimizer))


def test_loading_unpickles_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, optimizer = _trained(0)
    _save(tmp_path / SHARDS, model, optimizer)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("pickle used to read a checkpoint")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    load_shards(tmp_path / SHARDS, *_trained(1))


def test_a_save_killed_midway_leaves_the_previous_checkpoint_whole(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    model, optimizer = _trained(0)
    folder = tmp_path / SHARDS
    _save(folder, model, optimizer)
    later, later_optimizer = _trained(0, steps=6)

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the pieces are written, trainer.pt is not

    monkeypatch.setattr("trainwell.engine.checkpoint.atomic_save", killed)
    with pytest.raises(KeyboardInterrupt):
        _save(folder, later, later_optimizer, step=6)
    monkeypatch.undo()
    assert (tmp_path / f".{SHARDS}.tmp").is_dir()  # the half-written one, beside the whole one
    assert last_checkpoint(tmp_path) == folder
    other, other_optimizer = _trained(1)
    assert load_shards(folder, other, other_optimizer)["state"] == {"step": 3}
    assert torch.equal(_one_step(model, optimizer), _one_step(other, other_optimizer))
    remove_leftovers(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == [SHARDS]


def test_a_save_killed_between_the_renames_gets_the_previous_checkpoint_back(tmp_path: Path) -> None:
    model, optimizer = _trained(0)
    folder = tmp_path / SHARDS
    _save(folder, model, optimizer)
    os.rename(folder, tmp_path / f".{SHARDS}.old")  # set aside; the new one never renamed into place
    assert last_checkpoint(tmp_path) is None
    remove_leftovers(folder)
    assert last_checkpoint(tmp_path) == folder
    load_shards(folder, *_trained(1))


def test_another_models_checkpoint_is_refused_naming_what_differs(tmp_path: Path) -> None:
    model, optimizer = _trained(0)
    _save(tmp_path / SHARDS, model, optimizer)
    wider = nn.Sequential(nn.Linear(6, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 3))
    with pytest.raises(TrainwellError, match=r"another model's weights .*0\.weight \(16, 6\) \(this model: "
                                             r"\(32, 6\)\)") as caught:
        load_shards(tmp_path / SHARDS, wider, torch.optim.AdamW(wider.parameters()))
    assert "config.yaml" in caught.value.fix


def test_the_newer_of_last_pt_and_a_sharded_checkpoint_is_resumed(tmp_path: Path) -> None:
    assert last_checkpoint(tmp_path) is None
    model, optimizer = _trained(0)
    _save(tmp_path / SHARDS, model, optimizer)
    assert last_checkpoint(tmp_path) == tmp_path / SHARDS
    (tmp_path / "last.pt").write_bytes(b"")
    os.utime(tmp_path / "last.pt", ns=(1, 1))
    assert last_checkpoint(tmp_path) == tmp_path / SHARDS
    os.utime(tmp_path / "last.pt")
    assert last_checkpoint(tmp_path) == tmp_path / "last.pt"
    (tmp_path / SHARDS / TRAINER).unlink()  # incomplete: not a checkpoint
    os.utime(tmp_path / "last.pt", ns=(1, 1))
    assert last_checkpoint(tmp_path) == tmp_path / "last.pt"
