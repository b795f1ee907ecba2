"""Optimizers and learning-rate schedules from the config."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler

from trainwell._errors import TrainwellError

PER_STEP = ("onecycle", "cosine")  # schedules planned over every step of the run


def build_optimizer(params: Iterable[torch.nn.Parameter] | list[dict[str, Any]], name: str, lr: float, *,
                    weight_decay: float = 0.0, momentum: float = 0.9) -> Optimizer:
    """``params``: parameters, or groups of them (dicts with ``params`` and their own options, e.g. ``lr``)."""
    given = list(params)
    if given and isinstance(given[0], dict):  # groups: each keeps its options; frozen parameters stay out
        params: Any = [{**g, "params": [p for p in g["params"] if p.requires_grad]} for g in given]
    else:
        params = [p for p in given if p.requires_grad]  # frozen parameters stay out of the optimizer
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    raise ValueError(f"Unknown optimizer {name!r}. Choose one of: adam, adamw, sgd.")


def build_scheduler(optimizer: Optimizer, name: str, *, epochs: int, steps_per_epoch: int | None,
                    step_size: int = 1, gamma: float = 0.1) -> tuple[LRScheduler | None, str]:
    """The scheduler and when it steps (``"step"`` after each batch or ``"epoch"`` after each epoch).

    ``onecycle`` and ``cosine`` step per batch (smooth over the whole run), so they need
    ``steps_per_epoch`` (``None``: unknown, an error for them); ``step`` decays by ``gamma`` every
    ``step_size`` epochs. With ``onecycle``, ``lr`` is the peak rate.
    """
    if steps_per_epoch is None and name in PER_STEP:
        raise TrainwellError(
            f"The {name!r} schedule plans the learning rate over every step of the run, but the training data "
            "has no len(), so the number of steps per epoch is unknown.",
            fix="pass fit(steps_per_epoch=N) with the number of batches one epoch yields, or use "
                "scheduler='step' or 'none'")
    total = max(1, epochs * (steps_per_epoch or 1))
    if name == "none":
        return None, "step"
    if name == "onecycle":
        peaks = [group["lr"] for group in optimizer.param_groups]  # each group peaks at its own rate
        return torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=peaks, total_steps=total), "step"
    if name == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total), "step"
    if name == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=step_size, gamma=gamma), "epoch"
    raise ValueError(f"Unknown scheduler {name!r}. Choose one of: none, onecycle, cosine, step.")
