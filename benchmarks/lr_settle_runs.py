"""The runs behind lr-too-high's "never settles" thresholds (docs/DOCTOR.md, "`lr-too-high`: a loss that never settles").

Each run trains on scikit-learn's digits (the sweeps' data, benchmarks/sweeps/_digits.py) in a plain loop and
keeps every training loss; the table gives the final validation accuracy, the jumps of the last quarter and the
relapses of the second half as ``trainwell.doctor.checks._loss_jumps`` counts them, and its verdict, with
lr-too-high's two guards applied as the check applies them: batches of 16 targets or more, and batches that
mix the classes as shuffled ones do (``LabelMix``, here on every batch; the check reads sampled steps).

    python benchmarks/lr_settle_runs.py [--set tuning|confirmation|all] [--only SUBSTR]

About a second a run on one CPU thread.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent / "sweeps"))
from _digits import accuracy, digits, mlp, shuffle_buffer  # noqa: E402

from trainwell.doctor.checks._loss_jumps import LabelMix, counts, unsettled  # noqa: E402


@dataclass(frozen=True)
class Run:
    name: str
    lr: float
    optimizer: str = "adam"  # adam, adamw, rmsprop, sgd
    model: str = "mlp"  # mlp, dropout, bn, cnn
    seed: int = 0
    momentum: float = 0.0
    batch: int = 32
    epochs: int = 8
    noise: float = 0.0  # share of training labels redrawn at random
    buffer: int = 0  # digits in label order through a shuffle buffer of this many samples (0: shuffled)


def _runs(kind: str) -> list[Run]:
    tuning = [Run(f"adam {f:g}x seed {s}", 1e-3 * f, seed=s) for f in (3, 10, 20, 30, 50) for s in range(6)]
    tuning += [Run(f"adam {f:g}x seed {s}", 1e-3 * f, seed=s) for f in (1, 70) for s in (0, 1, 3)]
    tuning += [Run("adam 1e-5", 1e-5), Run("adam 1e-4", 1e-4), Run("sgd 1e-3", 1e-3, "sgd"),
               Run("adam, random labels", 1e-3, noise=1.0),
               Run("dropout 0.3, adam 10x", 1e-2, model="dropout"), Run("dropout 0.3, adam 3x", 3e-3, model="dropout"),
               Run("batch norm, adam 10x", 1e-2, model="bn"), Run("batch norm, adam 30x", 3e-2, model="bn"),
               Run("cnn, adam 10x", 1e-2, model="cnn"), Run("cnn, adam 30x", 3e-2, model="cnn"),
               Run("rmsprop 3x", 3e-3, "rmsprop"), Run("rmsprop 20x", 2e-2, "rmsprop"), Run("rmsprop 30x", 3e-2, "rmsprop"),
               Run("sgd 0.3", 0.3, "sgd"), Run("sgd 1.0", 1.0, "sgd"), Run("sgd 1.0 seed 2", 1.0, "sgd", seed=2),
               Run("sgd 0.1 momentum 0.9", 0.1, "sgd", momentum=0.9),
               Run("adam 3x, batch 8", 3e-3, batch=8), Run("adam 10x, batch 128, 30 epochs", 1e-2, batch=128, epochs=30),
               Run("adam, 20 % wrong labels, 20 epochs", 1e-3, noise=0.2, epochs=20),
               Run("adam 3x, 20 % wrong labels, 20 epochs", 3e-3, noise=0.2, epochs=20),
               Run("adam, 40 % wrong labels, 20 epochs", 1e-3, noise=0.4, epochs=20),
               Run("adam, label order, buffer 100", 1e-3, buffer=100), Run("adam, label order, buffer 32", 1e-3, buffer=32)]
    confirmation = [Run(f"adam {f:g}x seed 7", 1e-3 * f, seed=7) for f in (1, 3, 10, 30, 50)]
    confirmation += [Run("adam 30x seed 8", 3e-2, seed=8), Run("dropout 0.3, adam 10x seed 8", 1e-2, model="dropout", seed=8),
                     Run("dropout 0.3, adam 10x seed 9", 1e-2, model="dropout", seed=9),
                     Run("cnn, adam 30x seed 7", 3e-2, model="cnn", seed=7),
                     Run("batch norm, adam 30x seed 7", 3e-2, model="bn", seed=7),
                     Run("adamw 30x seed 7", 3e-2, "adamw", seed=7), Run("rmsprop 10x seed 7", 1e-2, "rmsprop", seed=7),
                     Run("sgd 0.5 seed 7", 0.5, "sgd", seed=7), Run("sgd 0.05 momentum 0.9 seed 7", 0.05, "sgd", 0.9, seed=7),
                     Run("adam, 30 % wrong labels, 15 epochs, seed 7", 1e-3, noise=0.3, epochs=15, seed=7),
                     Run("adam 3x, label order, buffer 200, seed 7", 3e-3, buffer=200, seed=7),
                     Run("adam 10x, batch 16, seed 7", 1e-2, batch=16, seed=7),
                     Run("adam 3x, batch 16, seed 7", 3e-3, batch=16, seed=7)]
    return {"tuning": tuning, "confirmation": confirmation, "all": tuning + confirmation}[kind]


def _model(kind: str) -> nn.Module:
    if kind in ("mlp", "dropout"):
        return mlp(0.3 if kind == "dropout" else 0.0)
    if kind == "bn":
        return nn.Sequential(nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Linear(128, 10))
    return nn.Sequential(nn.Unflatten(1, (1, 8, 8)), nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(32 * 16, 10))


def _optimizer(run: Run, params) -> torch.optim.Optimizer:  # type: ignore[no-untyped-def]
    if run.optimizer == "sgd":
        return torch.optim.SGD(params, lr=run.lr, momentum=run.momentum)
    return {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "rmsprop": torch.optim.RMSprop}[run.optimizer](
        params, lr=run.lr)


def _order(y: torch.Tensor, buffer: int) -> torch.Tensor:
    """A shuffled epoch, or label order through a streaming shuffle buffer of ``buffer`` samples."""
    if not buffer:
        return torch.randperm(len(y))
    by_label = torch.argsort(y, stable=True).tolist()
    return torch.tensor(list(shuffle_buffer(by_label, buffer, lambda n: int(torch.randint(n, ())))))


def train(run: Run) -> tuple[float, list[float], LabelMix]:
    """The final validation accuracy, every training loss and the classes of the batches."""
    torch.manual_seed(run.seed)
    x, y, xv, yv = digits()
    if run.noise:
        y = torch.where(torch.rand(len(y)) < run.noise, torch.randint(0, 10, y.shape), y)
    model = _model(run.model)
    opt = _optimizer(run, model.parameters())
    losses: list[float] = []
    mix = LabelMix()
    for _ in range(run.epochs):
        order = _order(y, run.buffer)
        for i in range(0, len(y), run.batch):
            idx = order[i:i + run.batch]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            losses.append(loss.item())
            mix.add(y[idx])
    model.eval()
    return accuracy(model, xv, yv), losses, mix


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("tuning", "confirmation", "all"), default="all")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"| run | accuracy | jumps (last quarter) | relapses (second half) | verdict |\n|---|---|---|---|---|")
    for run in _runs(args.set):
        if args.only not in run.name:
            continue
        acc, losses, mix = train(run)
        jumps, relapses = counts(losses, losses[0])
        found = unsettled(losses, losses[0])
        verdict = found.form if found else "-"
        if found and run.batch < 16:
            verdict = f"- ({found.form}, but batches under 16)"
        elif found and not mix.mixed():
            verdict = f"- ({found.form}, but batches hold {mix.ratio():.2f} of a shuffled batch's classes)"
        print(f"| {run.name} | {acc:.3f} | {jumps} of {len(losses) // 4} | {relapses} | {verdict} |", flush=True)


if __name__ == "__main__":
    main()
