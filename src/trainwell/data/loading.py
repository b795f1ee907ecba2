"""DataLoaders whose order depends only on (seed, epoch): the basis of exact resume."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, Sampler

from trainwell.data.bundle import TensorData


class EpochSampler(Sampler[int]):
    """Shuffles with a generator seeded from (seed, epoch) and can start part-way through an epoch."""

    def __init__(self, n: int, *, shuffle: bool, seed: int) -> None:
        self.n = n
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.start = 0  # samples to skip (a resumed epoch)

    def set_epoch(self, epoch: int, start: int = 0) -> None:
        self.epoch = epoch
        self.start = start

    def __iter__(self) -> Iterator[int]:
        if self.shuffle:
            g = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
            order = torch.randperm(self.n, generator=g).tolist()
        else:
            order = list(range(self.n))
        return iter(order[self.start:])

    def __len__(self) -> int:
        return self.n - self.start


def _seed_worker(worker_id: int) -> None:
    # torch seeds each worker from the loader's generator; NumPy and random need it too.
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


def default_workers(dataset: Dataset, requested: int | None) -> int:
    """``requested``, or the machine's default for this data (0 in memory: trainwell's ``TensorData`` and
    torch's ``TensorDataset``, whose items are tensors already loaded; see ``trainwell.machine``)."""
    from torch.utils.data import TensorDataset

    from trainwell.machine import loader_defaults, this_machine

    in_memory = isinstance(dataset, (TensorData, TensorDataset))
    return int(loader_defaults(this_machine(), in_memory=in_memory, cuda=False, workers=requested)["num_workers"])


class EpochBatchSampler(Protocol):
    """Yields lists of indices; its order is a function of (seed, epoch); can skip batches on resume."""

    def set_epoch(self, epoch: int, skip_batches: int = 0) -> None: ...

    def __iter__(self) -> Iterator[list[int]]: ...

    @property
    def batches_per_epoch(self) -> int: ...


@dataclass(frozen=True)
class MicroBatch:
    """Where a micro-batch sits in its optimizer step, known before its samples are loaded."""

    indices: list[int]  # the dataset indices of its samples (this process's)
    step_samples: int  # samples of its whole global batch, every process and micro-batch together
    index: int  # its place among this process's micro-batches of the step
    count: int  # this process's micro-batches in the step (the same on every process)
    # False for a stand-in: a process whose share of a short last batch has fewer micro-batches than another's
    # computes one sample of the batch with weight 0 instead, so every process runs the same forward/backward calls.
    live: bool = True


def split_micro(indices: list[int], size: int) -> list[list[int]]:
    """A process's share cut into micro-batches of ``size``; a last one of a single sample takes one from the one
    before it (``size - 1`` and 2: no 1-sample BatchNorm batch in training where the share has more)."""
    parts = [indices[i:i + size] for i in range(0, len(indices), size)]
    if len(parts) > 1 and len(parts[-1]) == 1 and size > 2:
        parts[-2:] = [parts[-2][:-1], [parts[-2][-1], *parts[-1]]]
    return parts


class Sharding(Protocol):
    """How a global batch is split among processes (``trainwell.engine.strategy.Strategy``)."""

    def shard(self, indices: list[int]) -> list[int]: ...

    def largest_share(self, n: int) -> int: ...


class _Planned(Sampler[list[Any]]):
    """The DataLoader's batch sampler: replays the index lists of the epoch the loader has just planned."""

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []  # sample indices, or SampleKeys

    def __iter__(self) -> Iterator[list[Any]]:
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


class EpochLoader:
    """A DataLoader over ``dataset``, with ``set_epoch(epoch, skip_batches)``.

    ``batch_size`` is the global batch (one optimizer step). ``micro_batch_size`` (default: the same) is how many
    samples each yielded batch holds: each global batch is first given to ``sharding`` (the strategy's choice of
    this process's indices; default all of them), then cut into micro-batches; every process gets as many
    micro-batches per step as the one with the largest share (stand-ins of weight 0 fill up, see
    :class:`MicroBatch`). ``micro_batches()`` yields each batch
    with its :class:`MicroBatch` (its sample indices, for augmentation that follows the sample, and its step);
    iterating the loader yields the batches alone. ``skip_batches`` counts global batches.

    ``batch_sampler`` replaces the default (shuffled, fixed-size) global batches, e.g. with length buckets;
    ``collate_fn`` builds a batch from items (e.g. padding sequences).

    A shuffled (training) loader over a dataset that augments each item itself (``draws_per_sample``: an image
    folder under ``data.augment: photo``) asks for items by :class:`~trainwell.data.photo.SampleKey`, the index with
    the seed of its draws (a function of seed, epoch and index), so a sample is augmented the same in whatever
    batch, process or worker it is loaded, and a resumed epoch repeats it.
    """

    def __init__(self, dataset: Dataset, *, batch_size: int, shuffle: bool, seed: int,
                 num_workers: int | None = None, pin_memory: bool = False, persistent_workers: bool = False,
                 prefetch_factor: int | None = None, collate_fn: Callable[[list[Any]], Any] | None = None,
                 batch_sampler: EpochBatchSampler | None = None, micro_batch_size: int | None = None,
                 sharding: Sharding | None = None) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.micro_batch_size = micro_batch_size or batch_size
        self.sharding = sharding
        self.sampler = EpochSampler(len(dataset), shuffle=shuffle, seed=seed)  # type: ignore[arg-type]
        self.custom_batches = batch_sampler
        self.global_batches: Iterable[list[int]] = batch_sampler if batch_sampler is not None \
            else BatchSampler(self.sampler, batch_size, drop_last=False)
        self.generator = torch.Generator()
        self.seed = seed
        self.epoch = 0
        self.keyed = shuffle and bool(getattr(dataset, "draws_per_sample", False))
        self._planned = _Planned()
        workers = default_workers(dataset, num_workers)
        # worker processes kept between epochs, and batches each prepares ahead (only with workers)
        kept: dict[str, Any] = {"persistent_workers": persistent_workers and workers > 0,
                                "prefetch_factor": prefetch_factor if workers > 0 else None}
        if collate_fn is not None:
            self.loader = DataLoader(dataset, batch_sampler=self._planned, num_workers=workers,
                                     collate_fn=collate_fn, worker_init_fn=_seed_worker, generator=self.generator,
                                     pin_memory=pin_memory, **kept)
        elif isinstance(dataset, TensorData):
            # Whole-batch indexing: one tensor gather per batch instead of batch_size items.
            self.loader = DataLoader(dataset, sampler=self._planned, batch_size=None, num_workers=workers,
                                     generator=self.generator, pin_memory=pin_memory, **kept)
        else:
            self.loader = DataLoader(dataset, batch_sampler=self._planned, num_workers=workers,
                                     worker_init_fn=_seed_worker, generator=self.generator,
                                     pin_memory=pin_memory, **kept)

    def set_epoch(self, epoch: int, skip_batches: int = 0) -> None:
        if self.custom_batches is not None:
            self.custom_batches.set_epoch(epoch, skip_batches)
        else:
            self.sampler.set_epoch(epoch, skip_batches * self.batch_size)
        self.generator.manual_seed(self.seed * 100_003 + epoch)  # worker seeds depend on the epoch only
        self.epoch = epoch

    def plan(self) -> list[MicroBatch]:
        """The rest of the epoch's micro-batches, in order."""
        planned = []
        size = self.micro_batch_size
        for batch in self.global_batches:
            batch = list(batch)
            mine = self.sharding.shard(batch) if self.sharding is not None else batch
            parts = split_micro(mine, size)
            count = -(-self.sharding.largest_share(len(batch)) // size) if self.sharding is not None else len(parts)
            # (Two samples where the batch has them: a stand-in goes through BatchNorm in training too.)
            stand_ins = [batch[:2]] * (count - len(parts))
            planned += [MicroBatch(part, len(batch), i, count, live=i < len(parts))
                        for i, part in enumerate(parts + stand_ins)]
        return planned

    def micro_batches(self) -> Iterator[tuple[MicroBatch, Any]]:
        """Each batch of the rest of the epoch with its place (the DataLoader keeps the planned order)."""
        plan = self.plan()
        if self.keyed:
            from trainwell.data.photo import sample_key

            self._planned.batches = [[sample_key(self.seed, self.epoch, i) for i in m.indices] for m in plan]
        else:
            self._planned.batches = [m.indices for m in plan]
        return zip(plan, self.loader, strict=True)

    def __iter__(self) -> Iterator[Any]:
        return (batch for _, batch in self.micro_batches())

    def __len__(self) -> int:
        return len(self.plan())

    @property
    def batches_per_epoch(self) -> int:
        """Global batches (optimizer steps) in a whole epoch."""
        if self.custom_batches is not None:
            return self.custom_batches.batches_per_epoch
        n = len(self.dataset)  # type: ignore[arg-type]
        return (n + self.batch_size - 1) // self.batch_size
