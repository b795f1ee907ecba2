"""Seeding and RNG state: same seed on CPU => identical results; checkpoints carry every RNG."""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
import torch

# (seed, epoch, draw, block) -> one generator seed
from trainwell._seeds import mix_seed as _seed_of


def seed_everything(seed: int, deterministic: bool = False) -> None:
    """Seed Python, NumPy and torch (CPU and every GPU).

    DataLoader workers are seeded by trainwell's loaders from a generator derived from
    the same seed. ``deterministic=True`` also asks torch for deterministic kernels
    (slower on GPU; on CPU results are already repeatable).

    >>> seed_everything(0)
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False


def get_rng_state() -> dict[str, Any]:
    """Every RNG's state, in types that ``torch.load(weights_only=True)`` accepts."""
    np_state = np.random.get_state()
    py_state = random.getstate()
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "numpy": {"keys": torch.from_numpy(np_state[1].astype(np.int64)), "pos": int(np_state[2]),
                  "has_gauss": int(np_state[3]), "cached_gaussian": float(np_state[4])},
        "python": {"version": py_state[0], "state": list(py_state[1]), "gauss_next": py_state[2]},
    }
    if torch.cuda.is_available():
        # The current GPU's (this process's device): one per visible GPU could not be restored where fewer are
        # visible, and each process of a run keeps its own (``rng_ranks``).
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    n = state["numpy"]
    np.random.set_state(("MT19937", n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"],
                         n["cached_gaussian"]))
    p = state["python"]
    random.setstate((p["version"], tuple(p["state"]), p["gauss_next"]))
    if "cuda" in state and torch.cuda.is_available():
        saved = state["cuda"]
        if isinstance(saved, (list, tuple)):  # written before: one state per GPU then visible
            current = torch.cuda.current_device()
            saved = saved[current] if current < len(saved) else None
        if saved is not None:
            torch.cuda.set_rng_state(saved)


def seed_rank_stream(seed: int, rank: int, step: int = 0) -> None:
    """Give process ``rank`` (> 0) of a multi-process run its own torch stream, for what each process draws by
    itself (dropout masks): every process seeded alike would drop the same units on each process's share of the
    batch. Rank 0 keeps the stream ``seed_everything`` started, so one process draws what rank 0 draws. ``step``
    > 0: a resumed run whose checkpoint does not hold this rank's own state (another number of processes)."""
    if rank > 0:
        torch.manual_seed(_seed_of(seed, 7_919, rank, step))  # (7,919: this use's own tag, apart from the draws')


DRAW_CHUNK = 4096  # samples per block of an epoch's draws (each block from its own generator)


class EpochDraws:
    """Augmentation randomness that follows the sample: the numbers sample ``i`` gets from its ``k``-th draw in an
    epoch are a function of (seed, epoch, k, i) only, not of the batch, micro-batch or process it lands in.

    Each draw ``k`` of a per-sample shape is a table with a row per sample index, made in blocks of
    ``DRAW_CHUNK`` rows from generators seeded by (seed, epoch, k, block) the first time a batch needs them, and
    indexed by the batch's sample indices. ``for_samples(indices)`` gives the draws of one batch.
    """

    def __init__(self, seed: int, epoch: int) -> None:
        self.seed = seed
        self.epoch = epoch
        self._tables: dict[tuple[int, tuple[int, ...]], torch.Tensor] = {}

    def for_samples(self, indices: list[int]) -> SampleDraws:
        return SampleDraws(self, indices)

    def table(self, draw: int, shape: tuple[int, ...], rows: int) -> torch.Tensor:
        """At least ``rows`` rows of draw ``draw`` (uniform in [0, 1), each row of ``shape``)."""
        key = (draw, shape)
        have = self._tables.get(key)
        done = 0 if have is None else have.shape[0]
        if rows > done:
            blocks = [torch.rand(DRAW_CHUNK, *shape,
                                 generator=torch.Generator().manual_seed(_seed_of(self.seed, self.epoch, draw, b)))
                      for b in range(done // DRAW_CHUNK, -(-rows // DRAW_CHUNK))]
            have = torch.cat(([have] if have is not None else []) + blocks)
            self._tables[key] = have
        assert have is not None
        return have


class SampleDraws:
    """One batch's view of :class:`EpochDraws`: ``rand(*shape)`` is the next draw, one row per sample."""

    def __init__(self, epoch: EpochDraws, indices: list[int]) -> None:
        self.epoch = epoch
        self.indices = indices
        self.draws = 0

    def rand(self, *shape: int) -> torch.Tensor:
        """Uniform numbers in [0, 1) of shape (batch, *shape)."""
        table = self.epoch.table(self.draws, tuple(shape), max(self.indices, default=-1) + 1)
        self.draws += 1
        return table[torch.tensor(self.indices, dtype=torch.long)]
