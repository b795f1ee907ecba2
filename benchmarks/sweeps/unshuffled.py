"""data-not-shuffled sweep: digits read in label order (as from one folder per class) through a shuffle
buffer of --strength samples, the way a streaming pipeline mixes them; 1,400 is a full shuffle, 1 none."""

import random

import torch
from torch.utils.data import DataLoader, IterableDataset

from _digits import accuracy, digits, finish, mlp, setup, shuffle_buffer, train_batches

size = int(setup(1400))
x, y, xv, yv = digits()
order = torch.argsort(y, stable=True)
x, y = x[order], y[order]


class Buffered(IterableDataset):
    def __init__(self, buffer: int) -> None:
        self.buffer, self.rng = buffer, random.Random(0)

    def __iter__(self):  # type: ignore[no-untyped-def]
        for j in shuffle_buffer(range(len(y)), self.buffer, self.rng.randrange):
            yield x[j], y[j]


loader = DataLoader(Buffered(size), batch_size=32)
model = mlp()
loss = train_batches(model, torch.optim.Adam(model.parameters(), lr=1e-3), lambda: loader)
finish(accuracy(model, xv, yv), loss)
