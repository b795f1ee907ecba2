"""The learning-rate range test: train a short while with an exponentially increasing learning rate, watch the
loss, and name the rate where it falls fastest.

``lr_range_test`` runs it on a :class:`Trainer` (the run's model, optimizer, loss, data, precision and device)
and restores the model, optimizer, loss and every RNG afterwards (``engine/snapshot.py``), so the run that
follows starts from the same weights as without the test. ``suggest`` is the pure analysis of a recorded curve:

- the sweep stops early once the loss is not finite or its running average exceeds ``diverge`` times its
  minimum; the rate at that step is where it diverged, and nothing from there on is used;
- the losses are smoothed by a centred moving average (no lag, unlike a running average, which would place the
  descent too far right), and the suggestion is the rate of the steepest descent of that curve (per decade of
  learning rate) before its minimum;
- when the smoothed loss does not fall clearly (by more than its own noise, and by at least 2 %), there is no
  suggestion, and the reason says so: the caller keeps the rate it had rather than inventing one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from trainwell.engine.callbacks import Callback
from trainwell.engine.smoothing import MovingAverage
from trainwell.engine.snapshot import preserved
from trainwell.engine.trainer import StopTraining, Trainer

START_LR = 1e-7
END_LR = 10.0
STEPS = 100
DIVERGE = 4.0  # stop once the running average of the loss exceeds this many times its minimum
MIN_STEPS = 10  # fewer finite points before the divergence cannot show a descent
MIN_DROP = 0.02  # a clear descent lowers the smoothed loss by at least this share of its start


@dataclass
class LrRange:
    """A recorded sweep and what it suggests (``suggestion`` None: no clear descent, ``reason`` says why)."""

    lrs: list[float]
    losses: list[float]
    smoothed: list[float]
    suggestion: float | None
    reason: str
    diverged_at: float | None = None  # the rate where the loss became non-finite or exceeded DIVERGE x its minimum
    min_at: float | None = None  # the rate of the smoothed loss's minimum
    seconds: float = 0.0
    settings: dict[str, Any] = field(default_factory=dict)  # start, end, steps, diverge

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (a non-finite loss becomes None)."""
        out = asdict(self)
        out["losses"] = [v if math.isfinite(v) else None for v in self.losses]
        out["smoothed"] = [v if math.isfinite(v) else None for v in self.smoothed]
        return out


def schedule(start: float, end: float, steps: int) -> list[float]:
    """``steps`` rates from ``start`` to ``end``, evenly spaced on a log scale."""
    if not 0 < start < end or steps < 2:
        raise ValueError(f"the sweep needs 0 < start < end and at least 2 steps (got {start:g}, {end:g}, {steps})")
    ratio = (end / start) ** (1 / (steps - 1))
    return [start * ratio**i for i in range(steps)]


def lr_range_test(trainer: Trainer, *, start: float = START_LR, end: float = END_LR, steps: int = STEPS,
                  diverge: float = DIVERGE) -> LrRange:
    """Sweep the learning rate of ``trainer``'s optimizer from ``start`` to ``end`` over ``steps`` optimizer
    steps of its training data (stopping early at divergence), then restore model, optimizer, loss and RNGs.

    ``trainer`` should be a throwaway one on the run's parts: no callbacks that write, no scheduler."""
    if diverge <= 1:
        raise ValueError(f"diverge must be above 1 (a multiple of the loss's minimum), got {diverge:g}")
    rates = schedule(start, end, steps)
    sweep = _Sweep(rates, diverge)
    began = time.perf_counter()
    saved_epochs, trainer.epochs = trainer.epochs, 10**9  # as many passes over the data as the sweep needs
    trainer.callbacks.append(sweep)
    try:
        with preserved(trainer.model, trainer.loss_fn, trainer.optimizer):
            trainer.fit()
    finally:
        trainer.callbacks.remove(sweep)
        trainer.epochs = saved_epochs
    result = suggest(rates[:len(sweep.losses)], sweep.losses, diverged_at=sweep.diverged_at)
    result.seconds = time.perf_counter() - began
    result.settings = {"start": start, "end": end, "steps": steps, "diverge": diverge}
    return result


class _Sweep(Callback):
    """Sets each step's rate and reads each step's loss (one device read per step: the sweep needs them all)."""

    def __init__(self, rates: list[float], diverge: float) -> None:
        self.rates, self.diverge = rates, diverge
        self.losses: list[float] = []
        self.running = MovingAverage(0.1)
        self.lowest = math.inf
        self.diverged_at: float | None = None

    def on_fit_start(self, trainer: Trainer) -> None:
        _set_lr(trainer, self.rates[0])

    def on_train_batch_end(self, trainer: Trainer, loss: Any) -> None:
        value = float(loss)
        rate = self.rates[len(self.losses)]
        self.losses.append(value)
        average = self.running.update(value)
        if math.isfinite(average):
            self.lowest = min(self.lowest, average)
        if not math.isfinite(value) or (self.running.count >= MIN_STEPS and average > self.diverge * self.lowest
                                        and self.lowest > 0):
            self.diverged_at = rate
            raise StopTraining
        if len(self.losses) == len(self.rates):
            raise StopTraining
        _set_lr(trainer, self.rates[len(self.losses)])


def _set_lr(trainer: Trainer, lr: float) -> None:
    for group in trainer.optimizer.param_groups:
        group["lr"] = lr


def suggest(lrs: Sequence[float], losses: Sequence[float], *, diverged_at: float | None = None) -> LrRange:
    """The rate of steepest descent of the smoothed loss, ignoring everything from the first non-finite loss on;
    ``suggestion`` None with the reason when no region shows a clear descent."""
    lrs, losses = list(lrs), [float(v) for v in losses]
    finite = next((i for i, v in enumerate(losses) if not math.isfinite(v)), len(losses))
    if diverged_at is None and finite < len(losses):
        diverged_at = lrs[finite]
    n = finite
    if diverged_at is not None:  # the step that diverged is not part of the usable curve
        n = min(n, next((i for i, r in enumerate(lrs) if r >= diverged_at), n))
    smoothed = _centred(losses[:n], max(2, n // 25))
    curve = LrRange(lrs, losses, smoothed + [math.nan] * (len(losses) - n), None, "", diverged_at)
    where = f"; it diverged at {fmt_lr(diverged_at)}" if diverged_at is not None else ""
    if n < MIN_STEPS:
        curve.reason = (f"no suggestion: only {n} usable step{'' if n == 1 else 's'} before the loss diverged at "
                        f"{fmt_lr(diverged_at)}; start the sweep lower") if diverged_at is not None \
            else f"no suggestion: only {n} steps recorded (at least {MIN_STEPS} are needed)"
        return curve
    low = min(range(n), key=lambda i: smoothed[i])
    curve.min_at = lrs[low]
    start, bottom = smoothed[0], smoothed[low]
    noise = _noise(losses[:low + 1], smoothed[:low + 1])  # the descent's own noise, not the divergence's jumps
    drop = start - bottom
    if low < 3 or drop <= max(MIN_DROP * abs(start), 3 * noise):
        curve.reason = (f"no suggestion: the smoothed loss shows no clear descent (from {start:.4g} it falls to "
                        f"{bottom:.4g} at best, within its noise of {noise:.2g}){where}")
        return curve
    logs = [math.log10(r) for r in lrs[:low + 1]]
    slopes = [(smoothed[min(i + 1, low)] - smoothed[max(i - 1, 0)]) / (logs[min(i + 1, low)] - logs[max(i - 1, 0)])
              for i in range(low + 1)]
    steepest = min(range(low + 1), key=lambda i: slopes[i])
    curve.suggestion = lrs[steepest]
    below = f", {diverged_at / lrs[steepest]:.0f}× below where it diverged at {fmt_lr(diverged_at)}" \
        if diverged_at is not None else f" (the loss had not diverged by {fmt_lr(lrs[n - 1])})"
    curve.reason = (f"{fmt_lr(lrs[steepest])}: the steepest descent of the smoothed loss ({slopes[steepest]:.3g} per "
                    f"decade of learning rate; it falls from {start:.4g} to {bottom:.4g} at {fmt_lr(lrs[low])})"
                    + below)
    return curve


def _centred(values: list[float], half: int) -> list[float]:
    """Each value averaged with up to ``half`` neighbours on either side (fewer at the ends)."""
    out = []
    for i in range(len(values)):
        window = values[max(0, i - half):i + half + 1]
        out.append(sum(window) / len(window))
    return out


def _noise(values: list[float], smoothed: list[float]) -> float:
    """The spread of the raw losses around their smoothed curve (a standard deviation)."""
    return math.sqrt(sum((v - s) ** 2 for v, s in zip(values, smoothed)) / max(len(values), 1))


def fmt_lr(lr: float | None) -> str:
    """A learning rate in two significant figures (``0.0032``, ``3.2e-05``)."""
    return "-" if lr is None else f"{lr:.2g}"
