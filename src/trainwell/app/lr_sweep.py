"""The learning-rate finder on a run's own parts (model, optimizer, loss, data, precision, device), shared by
``trainwell train --lr auto``, ``fit(lr="find")`` and ``trainwell lr-find``: the sweep, the decision (the
suggestion, or the configured rate kept with the reason), and the record in a folder (lr_find.json,
lr_find.png)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from torch import nn
from torch.optim import Optimizer

from trainwell._errors import TrainwellError
from trainwell.engine.lr_range import END_LR, START_LR, STEPS, LrRange, fmt_lr, lr_range_test
from trainwell.engine.trainer import LossFn, Trainer


def sweep(model: nn.Module, loss_fn: LossFn, optimizer: Optimizer, loader: Iterable[Any], *, device: Any,
          precision: str = "32", accumulate: int = 1, grad_clip: float | None = None, seed: int = 0,
          transforms: tuple[Any, Any] = (None, None), start: float = START_LR, end: float = END_LR,
          steps: int = STEPS) -> LrRange:
    """The range test on these parts in this process (eager, without torch.compile: the rates it finds are the
    model's, not the compiler's); model, optimizer, loss and RNGs are as before when it returns."""
    trainer = Trainer(model, loss_fn, optimizer, loader, device=device, precision=precision, accumulate=accumulate,
                      grad_clip=grad_clip, seed=seed, train_transform=transforms[0], eval_transform=transforms[1])
    return lr_range_test(trainer, start=start, end=end, steps=steps)


def sweep_run(config: Any, parts: Any, *, start: float = START_LR, end: float = END_LR, steps: int = STEPS) -> LrRange:
    """The sweep on a run's parts (``trainwell.app.run.prepare``) with its optimizer (a fresh one, whose
    rate the sweep sets), batch size, precision, accumulation, clipping and input transforms."""
    from trainwell.engine.optim import build_optimizer

    tc = config.train
    optimizer = build_optimizer([*parts.model.parameters(), *parts.loss_fn.parameters()], tc.optimizer, start,
                                weight_decay=tc.weight_decay, momentum=tc.momentum)
    return sweep(parts.model, parts.loss_fn, optimizer, parts.loader(tc.batch_size), device=parts.device,
                 precision=tc.precision, accumulate=tc.accumulate, grad_clip=tc.grad_clip, seed=config.seed,
                 transforms=parts.task.transforms(config, parts.bundle), start=start, end=end, steps=steps)


def single_process(world_size: int, what: str) -> None:
    """The finders run in one process; under several they would each find their own value."""
    if world_size > 1:
        raise TrainwellError(f"{what} is not supported with several processes (--nproc / torchrun) yet: each "
                             "process would search on its own and they could disagree.",
                             fix="run `trainwell lr-find` (one process) with the same options and pass the rate it "
                                 "suggests to --lr, and give --batch-size a number")


def decide(result: LrRange, configured: float) -> tuple[float, str]:
    """The rate to train with and the sentence that says where it came from."""
    if result.suggestion is not None:
        return result.suggestion, f"learning rate {fmt_lr(result.suggestion)} from the finder: {result.reason}"
    return configured, f"learning rate {configured:g} kept (the configured one): the finder gave {result.reason}"


def record(folder: Path, result: LrRange, *, chosen: float | None, configured: float | None) -> dict[str, Any]:
    """Write lr_find.json (the curve, the suggestion and its reason, the rate used) and lr_find.png; returns the
    short entry for summary.json."""
    from trainwell.engine.run_folder import write_json
    from trainwell.report.plots import lr_find_plot
    from trainwell._files import atomic_write

    write_json(folder / "lr_find.json", {**result.to_dict(), "chosen": chosen, "configured": configured})
    png = lr_find_plot(result.lrs, result.losses, result.smoothed, suggestion=result.suggestion,
                       diverged_at=result.diverged_at)
    atomic_write(folder / "lr_find.png", lambda f: f.write(png))
    return summary_entry(folder)


def summary_entry(folder: Path) -> dict[str, Any]:
    """summary.json's ``lr_find``, from a folder's lr_find.json (empty when there is none)."""
    import json

    path = folder / "lr_find.json"
    if not path.is_file():
        return {}
    found = json.loads(path.read_text(encoding="utf-8"))
    return {"lr_find": {k: found.get(k) for k in ("chosen", "suggestion", "reason", "diverged_at", "configured")}
            | {"curve": "lr_find.json", "plot": "lr_find.png"}}
