"""train_accuracy: each epoch's share of top-1 hits over the training batches, whatever the batching."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset

import trainwell


def _data() -> tuple[nn.Module, TensorDataset, float]:
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(100, 5, generator=g), torch.randint(0, 3, (100,), generator=g)
    model = nn.Linear(5, 3)
    with torch.no_grad():
        expected = float((model(x).argmax(1) == y).float().mean())
    return model, TensorDataset(x, y), expected


@pytest.mark.parametrize("accumulate", [1, 4])
def test_train_accuracy_counts_every_training_sample_once(accumulate: int) -> None:
    model, data, expected = _data()
    # SGD at lr 0 keeps the weights, so the hits over the epoch are the fixed model's accuracy on the whole
    # split; batch 32 leaves a last batch of 4, and --accumulate 4 cuts that one into a single micro-batch.
    result = trainwell.fit(model, data, data, epochs=2, optimizer=torch.optim.SGD(model.parameters(), lr=0.0), batch_size=32,
                           accumulate=accumulate, progress="none")
    for row in result.history:
        assert row["train_accuracy"] == pytest.approx(expected, abs=1e-6)
        assert row["val_accuracy"] == pytest.approx(expected, abs=1e-6)


def test_no_train_accuracy_where_accuracy_does_not_apply() -> None:
    x = torch.randn(40, 4)
    result = trainwell.fit(nn.Linear(4, 1), TensorDataset(x, x.sum(1, keepdim=True)), epochs=1, loss=nn.MSELoss(),
                           progress="none")
    assert "train_accuracy" not in result.history[0]
