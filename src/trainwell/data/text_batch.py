"""Token-id sequences in batches: per-batch padding with lengths, and length bucketing.

A batch is ``((tokens LongTensor[B, T], lengths LongTensor[B]), labels LongTensor[B])``, T the
longest sequence in that batch, padded with ``<pad>`` = 0 on the right. The order of batches is
a function of (seed, epoch) only, so exact resume still works.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import Dataset, Sampler

from trainwell.data.vocab import PAD_ID

BUCKET_BATCHES = 50  # bucketing sorts by length inside windows of this many batches, keeping shuffles random


class TextData(Dataset):
    """Encoded texts (each a 1-D LongTensor of token ids) and their class indices."""

    def __init__(self, ids: list[torch.Tensor], labels: torch.Tensor) -> None:
        if len(ids) != len(labels):
            raise ValueError(f"{len(ids)} texts but {len(labels)} labels")
        self.ids = ids
        self.y = labels
        self.lengths = [len(t) for t in ids]

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.ids[index], self.y[index]


def pad_batch(items: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
    """[(ids, label), ...] -> ((tokens (B, T), lengths (B,)), labels (B,)), padded to the longest in the batch."""
    seqs = [s for s, _ in items]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    tokens = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=PAD_ID)  # (B, T)
    labels = torch.stack([y for _, y in items])
    return (tokens, lengths), labels


class BucketBatchSampler(Sampler[list[int]]):
    """Batches of similar length: shuffle (seeded by seed and epoch), sort inside windows of
    ``BUCKET_BATCHES`` batches, then shuffle the batches. ``set_epoch(epoch, skip)`` skips batches.

    Without ``shuffle`` the windows are sorted but not shuffled (evaluation: order is irrelevant,
    padding is not). With ``bucket=False`` it is a plain (shuffled) batch sampler.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, *, shuffle: bool, seed: int,
                 bucket: bool = True) -> None:
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.bucket = bucket
        self.epoch = 0
        self.skip = 0

    def set_epoch(self, epoch: int, skip_batches: int = 0) -> None:
        self.epoch = epoch
        self.skip = skip_batches

    def batches(self) -> list[list[int]]:
        """Every batch of the current epoch, in order (before skipping)."""
        n, size = len(self.lengths), self.batch_size
        g = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        order = torch.randperm(n, generator=g).tolist() if self.shuffle else list(range(n))
        if self.bucket:
            window = size * BUCKET_BATCHES
            order = [i for start in range(0, n, window)
                     for i in sorted(order[start:start + window], key=self.lengths.__getitem__)]
        batches = [order[i:i + size] for i in range(0, n, size)]
        if self.shuffle and self.bucket:
            batches = [batches[i] for i in torch.randperm(len(batches), generator=g).tolist()]
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches()[self.skip:])

    def __len__(self) -> int:
        return self.batches_per_epoch - self.skip

    @property
    def batches_per_epoch(self) -> int:
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


def text_loader_options(data: TextData, batch_size: int, *, shuffle: bool, seed: int,
                        bucket: bool) -> dict[str, Any]:
    """The ``EpochLoader`` options for a :class:`TextData` split."""
    return {"collate_fn": pad_batch, "num_workers": 0,  # in memory: worker processes only add overhead
            "batch_sampler": BucketBatchSampler(data.lengths, batch_size, shuffle=shuffle, seed=seed, bucket=bucket)}
