"""Tests for seeding and RNG state capture (what makes runs repeatable and resume exact)."""

from __future__ import annotations

import io
import random
from typing import Any

import numpy as np
import pytest
import torch

from trainwell.engine.seed import EpochDraws, get_rng_state, seed_everything, set_rng_state


@pytest.fixture(autouse=True)
def _restore_global_rngs(monkeypatch: pytest.MonkeyPatch):
    # seed_everything sets PYTHONHASHSEED; monkeypatch puts the old value (or its absence) back.
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    py, npy, th = random.getstate(), np.random.get_state(), torch.get_rng_state()
    yield
    random.setstate(py)
    np.random.set_state(npy)
    torch.set_rng_state(th)


def _draw() -> dict[str, Any]:
    """Consume from every RNG, including the cached-Gaussian paths of Python and NumPy."""
    return {
        "python": [random.random(), random.gauss(0, 1), random.randint(0, 10**9)],
        "numpy": np.concatenate([np.random.rand(3), [np.random.standard_normal()], np.random.randint(0, 10**9, 2)]),
        "torch": torch.cat([torch.rand(3), torch.randn(2), torch.randint(0, 10**9, (2,)).float()]),
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a["python"] == b["python"] and np.array_equal(a["numpy"], b["numpy"])
            and torch.equal(a["torch"], b["torch"]))


def _differs_everywhere(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a["python"] != b["python"] and not np.array_equal(a["numpy"], b["numpy"])
            and not torch.equal(a["torch"], b["torch"]))


def test_seed_everything_repeats_all_three_generators() -> None:
    seed_everything(123)
    first = _draw()
    seed_everything(123)
    second = _draw()
    assert _same(first, second)
    seed_everything(124)
    assert _differs_everywhere(first, _draw())


def test_seed_everything_accepts_seeds_beyond_numpys_range() -> None:
    seed_everything(2**33 + 5)  # NumPy's legacy seed must be < 2**32: it is reduced, not rejected
    a = _draw()
    seed_everything(2**33 + 5)
    assert _same(a, _draw())


def _mid_gaussian_state() -> None:
    """Leave both Python and NumPy holding a cached second Gaussian, the easy part to lose."""
    random.gauss(0, 1)
    np.random.standard_normal()
    torch.randn(1)


def test_rng_state_round_trip() -> None:
    seed_everything(7)
    _mid_gaussian_state()
    state = get_rng_state()
    expected = _draw()
    _draw()  # move every generator on
    set_rng_state(state)
    assert _same(expected, _draw())


def test_rng_state_round_trip_through_torch_save_weights_only() -> None:
    seed_everything(11)
    _mid_gaussian_state()
    state = get_rng_state()
    expected = _draw()
    buf = io.BytesIO()
    torch.save({"rng": state}, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=True)["rng"]
    seed_everything(999)  # a fresh process would start elsewhere
    _draw()
    set_rng_state(loaded)
    assert _same(expected, _draw())


def test_get_rng_state_does_not_consume_randomness() -> None:
    seed_everything(5)
    get_rng_state()
    a = _draw()
    seed_everything(5)
    assert _same(a, _draw())


def test_augmentation_draws_depend_on_seed_epoch_and_sample_not_on_the_batch() -> None:
    def draw(seed: int, epoch: int, indices: list[int]) -> torch.Tensor:
        return EpochDraws(seed, epoch).for_samples(indices).rand(3)

    whole = draw(0, 1, [7, 5000, 2])  # 5000: a sample in the second block of draws
    assert torch.equal(whole, draw(0, 1, [7, 5000, 2]))
    assert torch.equal(whole[1:], draw(0, 1, [5000, 2]))  # the same sample gets the same numbers in any batch
    assert torch.equal(whole[:1], draw(0, 1, [7]))
    assert not torch.equal(whole, draw(0, 2, [7, 5000, 2]))
    assert not torch.equal(whole, draw(1, 1, [7, 5000, 2]))
    assert not torch.equal(whole[0], whole[2])
    one = EpochDraws(0, 1).for_samples([7])
    assert not torch.equal(one.rand(3), one.rand(3))  # successive draws of a batch differ


class _FakeCuda:
    """torch.cuda's RNG functions on a machine with ``visible`` GPUs, current device ``current`` (this machine has
    none: what is checked is which states trainwell saves and which it restores where)."""

    def __init__(self, visible: int, current: int) -> None:
        self.visible, self.current, self.restored = visible, current, []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: self.current)
        monkeypatch.setattr(torch.cuda, "get_rng_state", lambda device="cuda": torch.tensor([self.current]))
        monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: [torch.tensor([i]) for i in range(self.visible)])
        monkeypatch.setattr(torch.cuda, "set_rng_state", lambda s, device="cuda": self.restored.append(int(s[0])))

        def set_all(states: list[torch.Tensor]) -> None:
            if len(states) > self.visible:
                raise IndexError("list index out of range")  # as torch does for a GPU that is not visible
            self.restored += [int(s[0]) for s in states]

        monkeypatch.setattr(torch.cuda, "set_rng_state_all", set_all)


def test_a_checkpoint_keeps_the_current_gpus_stream_and_resumes_where_fewer_are_visible(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Saved with 2 visible GPUs (one state each, restored by index) a run could not resume under
    CUDA_VISIBLE_DEVICES=0; now the process's own GPU's stream is saved and restored on the current GPU."""
    saving = _FakeCuda(visible=2, current=1)
    saving.install(monkeypatch)
    state = get_rng_state()
    assert int(state["cuda"][0]) == 1  # the process's own GPU (cuda:1), not a list of every visible one
    resuming = _FakeCuda(visible=1, current=0)
    resuming.install(monkeypatch)
    set_rng_state(state)
    assert resuming.restored == [1]
    old = {**state, "cuda": [torch.tensor([0]), torch.tensor([1])]}  # the format written before: one per GPU
    set_rng_state(old)
    assert resuming.restored == [1, 0]
