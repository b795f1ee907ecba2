"""Two heads, two losses, learned task weights: digit class + amount of ink, on sklearn's 8x8 digits.

The model shares one hidden layer and has two heads: 10 digit logits (cross-entropy) and the
image's mean pixel intensity, standardized (mean squared error). ``UncertaintyWeighting`` learns
how much each task counts; metrics.csv and report.html show each task's loss and weight.

    .venv/bin/python examples/multitask_digits.py [out_dir]
"""

from __future__ import annotations

import sys
import time

import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import Dataset

import trainwell
from trainwell.losses import MultiTaskLoss, UncertaintyWeighting


class DigitsTwoTargets(Dataset):
    """(image, (digit, ink)) pairs: a model with two heads needs one target per head."""

    def __init__(self, x: torch.Tensor, digit: torch.Tensor, ink: torch.Tensor) -> None:
        self.x, self.digit, self.ink = x, digit, ink

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        return self.x[i], (self.digit[i], self.ink[i])


class TwoHeads(nn.Module):
    def __init__(self, n_in: int = 64, hidden: int = 64, n_classes: int = 10) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU())
        self.digit = nn.Linear(hidden, n_classes)
        self.ink = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(x)                              # (B, hidden)
        return self.digit(h), self.ink(h).squeeze(-1)  # (B, 10), (B,)


def digits_datasets(n_val: int = 360, seed: int = 0) -> tuple[DigitsTwoTargets, DigitsTwoTargets]:
    data = load_digits()
    x = torch.tensor(data.data, dtype=torch.float32) / 16.0           # (N, 64) in [0, 1]
    digit = torch.tensor(data.target, dtype=torch.long)
    ink = x.mean(dim=1)
    ink = (ink - ink.mean()) / ink.std()                               # standardized regression target
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    val, train = order[:n_val], order[n_val:]
    return (DigitsTwoTargets(x[train], digit[train], ink[train]),
            DigitsTwoTargets(x[val], digit[val], ink[val]))


def main(out: str | None = "runs") -> trainwell.FitResult:
    train, val = digits_datasets()
    torch.manual_seed(0)
    loss = MultiTaskLoss({"digit": nn.CrossEntropyLoss(), "ink": nn.MSELoss()}, weights=UncertaintyWeighting(2))
    result = trainwell.fit(TwoHeads(), train, val, loss=loss, epochs=15, lr=3e-3, seed=0, out=out, device="cpu")
    last = result.final
    print(f"val accuracy (digit): {last['val_accuracy_digit']:.3f}   val MSE (ink): {last['val_ink']:.4f}")
    print("learned task weights:", {k: round(v, 3) for k, v in loss.weights().items()})
    if result.run_dir is not None:
        print(f"report: {result.run_dir / 'report.html'}")
    return result


if __name__ == "__main__":
    # A new run folder each time: trainwell never writes into an existing run.
    main(sys.argv[1] if len(sys.argv) > 1 else time.strftime("runs/multitask-digits-%Y%m%d-%H%M%S"))
