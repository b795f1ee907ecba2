"""Gradient accumulation that keeps the optimization of the global batch (``train.accumulate``).

``train.batch_size`` is the global batch: the samples behind one optimizer step. It is computed in
``processes x accumulate`` micro-batches, and every step's gradient is the gradient of the mean loss over its
global batch. A mean loss over a micro-batch is therefore weighted by the micro-batch's share of what the
global batch's mean divides by, counted before any of the step is computed:

- its samples, for losses that average over samples;
- its counted targets, for cross-entropy / NLL on class indices, as modules or as ``functools.partial`` of
  ``F.cross_entropy`` / ``F.nll_loss`` (targets equal to ``ignore_index`` are not counted; with class weights each
  target counts its class's weight), so per-token losses over padded
  sequences average over the real tokens of the whole global batch, not over micro-batches;
- its target elements, for element-wise losses (MSE, L1, Huber, BCE) averaged over elements.

The last, smaller global batch of an epoch is weighted by its own size in the same way.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import nn

from trainwell._errors import ConfigError
from trainwell.data.loading import MicroBatch
from trainwell.engine.strategy import Strategy

# Losses whose mean reduction averages over every element of the target.
_ELEMENTWISE = (nn.MSELoss, nn.L1Loss, nn.SmoothL1Loss, nn.HuberLoss, nn.BCELoss, nn.BCEWithLogitsLoss)


def micro_batch_size(batch_size: int, *, processes: int = 1, accumulate: int = 1) -> int:
    """The samples one process computes at once: ``batch_size / (processes x accumulate)``, which must divide."""
    if accumulate < 1:
        raise ConfigError(f"train.accumulate must be at least 1, got {accumulate}.", fix="--accumulate 1")
    parts = processes * accumulate
    if batch_size % parts:
        lower = max(parts, batch_size - batch_size % parts)
        raise ConfigError(
            f"train.batch_size={batch_size} is the global batch (the samples of one optimizer step); it cannot be "
            f"split into {processes} process(es) x {accumulate} accumulated micro-batch(es) of equal size.",
            fix=f"make the batch size divisible by {parts} (e.g. {lower}), or change accumulate")
    return batch_size // parts


def steps_per_epoch(loader: Any, accumulate: int = 1) -> int | None:
    """Optimizer steps in one epoch of ``loader``: its global batches (an ``EpochLoader``), or its batches
    grouped ``accumulate`` at a time; ``None`` for data without a length."""
    known = getattr(loader, "batches_per_epoch", None)
    if isinstance(known, int):
        return known
    try:
        return math.ceil(len(loader) / accumulate)
    except TypeError:
        return None


def group_steps(micro_batches: Iterator[tuple[MicroBatch | None, Any]],
                accumulate: int) -> Iterator[list[tuple[MicroBatch | None, Any]]]:
    """Micro-batches -> the lists that make one optimizer step each. A loader that plans its micro-batches
    says how many its step has; otherwise ``accumulate`` consecutive batches make a step (fewer at the end)."""
    group: list[tuple[MicroBatch | None, Any]] = []
    for planned, batch in micro_batches:
        group.append((planned, batch))
        if len(group) == (planned.count if planned is not None else accumulate):
            yield group
            group = []
    if group:
        yield group


def _class_loss(loss_fn: Any) -> tuple[int, torch.Tensor | None, str] | None:
    """(ignore_index, weight, reduction) of a cross-entropy / NLL loss: the module, or ``F.cross_entropy`` /
    ``F.nll_loss`` with its options bound by ``functools.partial``; None for any other loss (or a partial that
    binds arguments by position: what they mean is not read)."""
    if isinstance(loss_fn, (nn.CrossEntropyLoss, nn.NLLLoss)):
        return loss_fn.ignore_index, loss_fn.weight, loss_fn.reduction
    if isinstance(loss_fn, functools.partial) and not loss_fn.args \
            and loss_fn.func in (nn.functional.cross_entropy, nn.functional.nll_loss):
        options = loss_fn.keywords
        return int(options.get("ignore_index", -100)), options.get("weight"), str(options.get("reduction", "mean"))
    return None


def _counted_by(loss_fn: Any, target: Any) -> str:
    """What ``loss_fn``'s mean over ``target`` divides by: ``"targets"``, ``"elements"`` or ``"samples"`` (from the
    loss and the target's type alone, so every process decides alike)."""
    settings = _class_loss(loss_fn)
    if settings is not None and settings[2] == "mean" and isinstance(target, torch.Tensor) \
            and not target.is_floating_point():
        return "targets"
    if isinstance(loss_fn, _ELEMENTWISE) and loss_fn.reduction == "mean" and isinstance(target, torch.Tensor):
        return "elements"
    return "samples"


def target_count(loss_fn: Any, target: Any) -> int | torch.Tensor:
    """What ``loss_fn``'s mean over ``target`` divides by (see the module's docstring); a device tensor when
    it depends on the targets' values, so counting never waits for the device."""
    kind = _counted_by(loss_fn, target)
    if kind == "targets":
        ignore_index, weight, _ = _class_loss(loss_fn)  # type: ignore[misc]
        counted = target != ignore_index
        if weight is None:
            return counted.sum()
        # An ignored target (255, -100) indexes no class: it looks up class 0 and is multiplied by 0.
        return (_weight_on(weight, target.device)[torch.where(counted, target, 0)] * counted).sum()
    if kind == "elements":
        return int(target.numel())
    return batch_size(target)


_WEIGHT_COPY: dict[str, Any] = {}  # the latest class-weight tensor copied to the targets' device, and its copy


def _weight_on(weight: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``weight`` on ``device``, the targets' (the trainer counts them on its device; a caller may count them
    where the loader left them): a weight kept elsewhere is copied once, not on every step (again after a
    change)."""
    if weight.device == device:
        return weight
    key = (id(weight), weight._version, str(device))
    if _WEIGHT_COPY.get("key") != key:
        _WEIGHT_COPY.update(key=key, source=weight, copy=weight.detach().to(device))
    return _WEIGHT_COPY["copy"]  # type: ignore[no-any-return]


def micro_weights(loss_fn: Any, targets: Sequence[Any], strategy: Strategy, device: torch.device, *,
                  live: Sequence[bool] | None = None,
                  step_samples: int | None = None) -> list[float | torch.Tensor] | None:
    """Each micro-batch's share of its global batch: the factors on their mean losses whose weighted sum, over
    this process's micro-batches and every process, is the global batch's mean loss. ``None`` when a single
    micro-batch in a single process is the whole global batch: its mean loss is the step's.

    ``live[i]`` False marks a stand-in micro-batch (weight 0). ``step_samples``, the global batch's size when the
    loader planned it, spares the processes an exchange when the loss averages over samples."""
    if len(targets) == 1 and strategy.world_size == 1:
        return None
    counts = [target_count(loss_fn, y) if live is None or live[i] else 0 for i, y in enumerate(targets)]
    local = sum(counts)
    total: float | torch.Tensor
    if strategy.world_size == 1 and isinstance(local, int):
        total = float(local)
    elif step_samples is not None and all(_counted_by(loss_fn, y) == "samples" for y in targets):
        total = float(step_samples)  # a mean over samples: every process knows the global batch's size
    else:  # every process decides alike (a stand-in's target has the type of a real one), so all exchange
        total = strategy.reduce_sum(torch.as_tensor(local, dtype=torch.float32, device=device))
    return [c / total for c in counts]


def batch_size(y: Any) -> int:
    """The number of samples in a batch's targets (the first element's, for several heads)."""
    if isinstance(y, torch.Tensor):
        return int(y.shape[0]) if y.ndim else 1
    if isinstance(y, (list, tuple)) and y:
        return batch_size(y[0])
    if isinstance(y, dict) and y:  # targets keyed by task name
        return batch_size(next(iter(y.values())))
    return 1
