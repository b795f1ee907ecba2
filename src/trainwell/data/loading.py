"""DataLoaders whose order depends only on (seed, epoch): the basis of exact resume."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

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
    if requested is not None:
        return requested
    if isinstance(dataset, TensorData):
        return 0  # already in memory: worker processes only add overhead
    return min(4, os.cpu_count() or 1)


class EpochLoader:
    """A DataLoader over ``dataset`` in batches, with ``set_epoch(epoch, skip_batches)``."""

    def __init__(self, dataset: Dataset, *, batch_size: int, shuffle: bool, seed: int,
                 num_workers: int | None = None, pin_memory: bool = False) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.sampler = EpochSampler(len(dataset), shuffle=shuffle, seed=seed)  # type: ignore[arg-type]
        self.generator = torch.Generator()
        self.seed = seed
        batches = BatchSampler(self.sampler, batch_size, drop_last=False)
        workers = default_workers(dataset, num_workers)
        if isinstance(dataset, TensorData):
            # Whole-batch indexing: one tensor gather per batch instead of batch_size items.
            self.loader = DataLoader(dataset, sampler=batches, batch_size=None, num_workers=workers,
                                     generator=self.generator, pin_memory=pin_memory)
        else:
            self.loader = DataLoader(dataset, batch_sampler=batches, num_workers=workers,
                                     worker_init_fn=_seed_worker, generator=self.generator,
                                     pin_memory=pin_memory, persistent_workers=False)

    def set_epoch(self, epoch: int, skip_batches: int = 0) -> None:
        self.sampler.set_epoch(epoch, skip_batches * self.batch_size)
        self.generator.manual_seed(self.seed * 100_003 + epoch)  # worker seeds depend on the epoch only

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return iter(self.loader)

    def __len__(self) -> int:
        return len(self.loader)

    @property
    def batches_per_epoch(self) -> int:
        n = len(self.dataset)  # type: ignore[arg-type]
        return (n + self.batch_size - 1) // self.batch_size
