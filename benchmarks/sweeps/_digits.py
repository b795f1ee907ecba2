"""What the sweep scripts share: the --strength argument, scikit-learn's 8x8 digits split into training
and validation sets, the MLP most of them train, a plain training loop, and the final line (JSON) the
sweep driver reads. Scripts whose bug lives in the loop itself write their own loop."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import torch
from sklearn.datasets import load_digits
from torch import nn


def setup(default: float) -> float:
    """The --strength argument; also seeds torch and pins one thread, as every sweep script does."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--strength", type=float, default=default)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    return parser.parse_args().strength


def digits(scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """1,400 training and 397 validation digits (64 pixels each), shuffled once with a fixed seed:
    standardized with the training set's statistics, or, given ``scale``, raw pixels in [0, scale]."""
    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0 * (scale or 1.0)
    y = torch.tensor(d.target)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    x, y = x[order], y[order]
    if scale is None:
        x = (x - x[:1400].mean(0)) / (x[:1400].std(0) + 1e-6)
    return x[:1400], y[:1400], x[1400:], y[1400:]


T = TypeVar("T")


def shuffle_buffer(items: Iterable[T], size: int, draw: Callable[[int], int]) -> Iterator[T]:
    """``items`` through a streaming shuffle buffer of ``size``: whenever it is full, the one at ``draw(n)`` (an
    index below n) leaves it; at the end the rest leave the same way."""
    pool: list[T] = []
    for item in items:
        pool.append(item)
        if len(pool) >= size:
            yield pool.pop(draw(len(pool)))
    while pool:
        yield pool.pop(draw(len(pool)))


def mlp(dropout: float = 0.0) -> nn.Sequential:
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(dropout), nn.Linear(128, 64), nn.ReLU(),
                         nn.Dropout(dropout), nn.Linear(64, 10))


def train(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor,
          epochs: int = 8) -> float:
    """Shuffled mini-batches of 32 with cross-entropy; returns the last batch's loss."""

    def shuffled() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        perm = torch.randperm(len(y))
        for i in range(0, len(y), 32):
            idx = perm[i:i + 32]
            yield x[idx], y[idx]

    return train_batches(model, optimizer, shuffled, epochs)


def train_batches(model: nn.Module, optimizer: torch.optim.Optimizer,
                  batches: Callable[[], Iterable[tuple[torch.Tensor, torch.Tensor]]], epochs: int = 8) -> float:
    """Cross-entropy over the batches ``batches()`` gives (called once an epoch); returns the last batch's loss."""
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for xb, yb in batches():
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
    return loss.item()


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def finish(metric: float, loss: float) -> None:
    """The line the sweep driver reads: the final validation accuracy and the last training loss."""
    print(json.dumps({"accuracy": metric, "loss": loss}))
