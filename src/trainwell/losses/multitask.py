"""Multi-task losses: several heads, one loss per head, combined into one total (guide B5.2).

Two ways to weigh the tasks:

* fixed weights, ``total = sum_i w_i * L_i`` (the guide's advice to start with), and
* learned uncertainty weighting (Kendall, Gal & Cipolla, 2018) with one learned
  ``s_i = log(sigma_i^2)`` per task. We follow the guide's formula
  ``0.5 / sigma_i^2 * L_i + log(sigma_i)``, which with ``s_i`` reads::

      total = sum_i 0.5 * (exp(-s_i) * L_i + s_i)

  so task ``i`` weighs ``0.5 * exp(-s_i)`` (0.5 at the start, ``s_i = 0``), and the
  ``+ s_i`` term stops every weight from collapsing to zero. For a fixed ``L_i`` the
  minimum is at ``s_i = log(L_i)``: a task whose loss stays large gets a larger ``s_i``
  and so a smaller weight.

``MultiTaskLoss`` returns ``{"loss": total, "<task>": L_task, ...}``; the trainer logs each
part per epoch as ``train_<task>`` / ``val_<task>`` (metrics.csv, TensorBoard, report.html).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn

TaskLoss = Callable[[Any, Any], Tensor]

# Task names become column names (train_<name>, val_<name>, val_accuracy_<name>), so they must not
# shadow the columns the trainer already writes.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED = ("loss", "accuracy")
_RESERVED_PREFIXES = ("weight_", "accuracy_")


class UncertaintyWeighting(nn.Module):
    """Learned per-task weights from a log-variance ``s_i`` per task (initialized to 0).

    ``forward(losses)`` returns ``sum_i 0.5 * (exp(-s_i) * L_i + s_i)``; ``weights()`` gives the
    current ``0.5 * exp(-s_i)`` per task. Optimize ``log_vars`` together with the model
    (``trainwell.fit`` does this for you when this module sits inside the loss).

    >>> weighting = UncertaintyWeighting(2)
    >>> total = weighting([torch.tensor(2.0), torch.tensor(0.5)])  # 0.5 * (2.0 + 0.5) at the start
    >>> weighting.weights()
    [0.5, 0.5]
    """

    def __init__(self, n_tasks: int) -> None:
        super().__init__()
        if isinstance(n_tasks, bool) or not isinstance(n_tasks, int) or n_tasks < 1:
            raise ValueError(f"UncertaintyWeighting(n_tasks) needs a positive int (one log-variance per task); "
                             f"got {n_tasks!r}.")
        self.log_vars = nn.Parameter(torch.zeros(n_tasks))  # s_i = log(sigma_i^2); 0 means weight 0.5

    @property
    def n_tasks(self) -> int:
        return int(self.log_vars.numel())

    def forward(self, losses: Sequence[Tensor]) -> Tensor:
        if len(losses) != self.n_tasks:
            raise ValueError(f"UncertaintyWeighting({self.n_tasks}) got {len(losses)} losses; pass exactly one "
                             f"scalar loss per task, in the same order every step.")
        stacked = torch.stack([_scalar(loss, str(i)) for i, loss in enumerate(losses)]).to(self.log_vars.dtype)
        return 0.5 * (torch.exp(-self.log_vars) * stacked + self.log_vars).sum()

    def weights(self) -> list[float]:
        """The current weight of each task, ``0.5 * exp(-s_i)`` (what multiplies its loss)."""
        return [float(w) for w in self._weight_tensor()]

    def _weight_tensor(self) -> Tensor:
        return 0.5 * torch.exp(-self.log_vars.detach())

    def extra_repr(self) -> str:
        return f"n_tasks={self.n_tasks}"


class MultiTaskLoss(nn.Module):
    """One loss per model output, combined with fixed weights or an ``UncertaintyWeighting``.

    Call it with ``(outputs, targets)`` where both are tuples/lists in task order, or dicts keyed
    by task name (targets may also be a tuple in task order). It returns
    ``{"loss": total, "<task>": that task's unweighted loss, ...}`` and, with learned weights,
    ``"weight_<task>"`` as well, so ``trainwell.fit`` logs ``train_<task>`` / ``val_<task>``.
    ``losses`` given as a list are named ``task0``, ``task1``, ...; ``weights=None`` means 1 each.

    >>> loss = MultiTaskLoss({"digit": nn.CrossEntropyLoss(), "mean": nn.MSELoss()},
    ...                      weights=UncertaintyWeighting(2))
    >>> parts = loss((digit_logits, mean_pred), (digit, mean))
    >>> parts["loss"].backward(); sorted(parts)
    ['digit', 'loss', 'mean', 'weight_digit', 'weight_mean']
    """

    def __init__(self, losses: Mapping[str, TaskLoss] | Sequence[TaskLoss],
                 weights: Sequence[float] | Mapping[str, float] | UncertaintyWeighting | None = None) -> None:
        super().__init__()
        self.task_names, fns = _named_losses(losses)
        self._fns = fns
        # Module losses (e.g. CrossEntropyLoss(weight=...)) move with .to(device) and are checkpointed.
        self.task_losses = nn.ModuleList([fn for fn in fns if isinstance(fn, nn.Module)])
        self.weighting: UncertaintyWeighting | None = None
        self.fixed_weights: tuple[float, ...] = ()
        if isinstance(weights, UncertaintyWeighting):
            if weights.n_tasks != len(self.task_names):
                raise ValueError(f"UncertaintyWeighting({weights.n_tasks}) does not match the "
                                 f"{len(self.task_names)} losses {list(self.task_names)}; "
                                 f"use UncertaintyWeighting({len(self.task_names)}).")
            self.weighting = weights
        else:
            self.fixed_weights = _fixed_weights(weights, self.task_names)

    def forward(self, outputs: Any, targets: Any) -> dict[str, Tensor]:
        outs = _per_task(outputs, self.task_names, "outputs", "return one output per task from forward(), "
                         "e.g. `return digit_logits, parity_logits`")
        tgts = _per_task(targets, self.task_names, "targets", "make your Dataset return (x, (y_task0, y_task1, ...))")
        losses = [_scalar(fn(o, t), name) for fn, o, t, name in zip(self._fns, outs, tgts, self.task_names)]
        if self.weighting is not None:
            total = self.weighting(losses)
        else:
            total = sum(w * loss for w, loss in zip(self.fixed_weights, losses))  # type: ignore[assignment]
        parts: dict[str, Tensor] = {"loss": total}
        parts.update({name: loss.detach() for name, loss in zip(self.task_names, losses)})
        if self.weighting is not None:
            parts.update({f"weight_{name}": w for name, w in zip(self.task_names, self.weighting._weight_tensor())})
        return parts

    def weights(self) -> dict[str, float]:
        """The current weight of each task by name (learned or fixed)."""
        values = self.weighting.weights() if self.weighting is not None else list(self.fixed_weights)
        return dict(zip(self.task_names, values))

    def extra_repr(self) -> str:
        kind = "learned" if self.weighting is not None else f"weights={list(self.fixed_weights)}"
        return f"tasks={list(self.task_names)}, {kind}"


# ------------------------------------------------------------------ validation


def _named_losses(losses: Any) -> tuple[tuple[str, ...], list[TaskLoss]]:
    if isinstance(losses, Mapping):
        names, fns = tuple(losses.keys()), list(losses.values())
    elif isinstance(losses, Sequence) and not isinstance(losses, (str, bytes)):
        names, fns = tuple(f"task{i}" for i in range(len(losses))), list(losses)
    else:
        raise ValueError("MultiTaskLoss(losses) takes a dict {task name: loss function} or a list of loss "
                         f"functions (one per model output); got {type(losses).__name__}.")
    if len(fns) < 2:
        raise ValueError(f"MultiTaskLoss needs at least two task losses; got {len(fns)}. "
                         "For a single output pass the loss function itself to fit(loss=...).")
    for name in names:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"Task name {name!r} is not usable as a column name; use letters, digits and "
                             "underscores, starting with a letter (e.g. 'digit', 'pixel_mean').")
        if name in _RESERVED or name.startswith(_RESERVED_PREFIXES):
            raise ValueError(f"Task name {name!r} would clash with trainwell's own columns "
                             f"({', '.join(_RESERVED)}, weight_*, accuracy_*); rename the task, e.g. '{name}_task'.")
    for name, fn in zip(names, fns):
        if not callable(fn):
            raise ValueError(f"The loss for task {name!r} is {fn!r}, which is not callable; "
                             "give a loss function such as nn.CrossEntropyLoss().")
    return names, fns


def _fixed_weights(weights: Any, names: tuple[str, ...]) -> tuple[float, ...]:
    if weights is None:
        return (1.0,) * len(names)
    if isinstance(weights, Mapping):
        missing, extra = [n for n in names if n not in weights], [k for k in weights if k not in names]
        if missing or extra:
            raise ValueError(f"weights has keys {list(weights)} but the tasks are {list(names)} "
                             f"(missing: {missing}, unknown: {extra}); give one weight per task name.")
        values = [weights[n] for n in names]
    elif isinstance(weights, Sequence) and not isinstance(weights, (str, bytes)):
        if len(weights) != len(names):
            raise ValueError(f"Got {len(weights)} weights {list(weights)} for {len(names)} tasks {list(names)}; "
                             "give one weight per task, in the same order as the losses.")
        values = list(weights)
    else:
        raise ValueError("weights must be a list of numbers (one per task), a dict {task: weight}, "
                         f"UncertaintyWeighting(n_tasks) or None; got {type(weights).__name__}.")
    for name, w in zip(names, values):
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise ValueError(f"The weight of task {name!r} is {w!r}; weights must be finite numbers >= 0.")
    if not any(values):
        raise ValueError(f"All weights are zero ({values}); nothing would be trained. Give at least one a "
                         "positive weight.")
    return tuple(float(w) for w in values)


def _per_task(value: Any, names: tuple[str, ...], what: str, fix: str) -> list[Any]:
    """``value`` (tuple/list in task order, or dict by task name) as a list in task order."""
    n = len(names)
    if isinstance(value, Mapping):
        missing, extra = [k for k in names if k not in value], [k for k in value if k not in names]
        if missing or extra:
            raise ValueError(f"The {what} are a dict with keys {list(value)} but the tasks are {list(names)} "
                             f"(missing: {missing}, unknown: {extra}); use the task names as keys.")
        return [value[k] for k in names]
    if isinstance(value, (tuple, list)):
        if len(value) != n:
            raise ValueError(f"Got {len(value)} {what} for {n} tasks {list(names)}; {fix}.")
        return list(value)
    shape = f" of shape {tuple(value.shape)}" if isinstance(value, Tensor) else ""
    raise ValueError(f"MultiTaskLoss has {n} tasks {list(names)} but the {what} are one "
                     f"{type(value).__name__}{shape}, not a tuple or dict with one entry per task; {fix}.")


def _scalar(loss: Any, name: str) -> Tensor:
    if not isinstance(loss, Tensor) or loss.numel() != 1:
        shape = tuple(loss.shape) if isinstance(loss, Tensor) else type(loss).__name__
        raise ValueError(f"The loss of task {name!r} must be a scalar tensor; got {shape}. "
                         "Use a loss with reduction='mean' (the default).")
    return loss.reshape(())
