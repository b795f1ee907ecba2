"""Early stopping: end the run once the monitored value has stopped improving.

It watches the monitored value (``Trainer.monitor``) in its direction (``engine/monitor.py``, never guessed from
a name). An epoch improves when it beats the best value seen at an improvement by more than ``min_delta``; after
``patience`` epochs in a row without one, the run stops after that epoch and then finishes normally (test on
best.pt, report). The counter lives in ``TrainState``, so a resumed run stops at the same epoch as an
uninterrupted one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from trainwell._errors import ConfigError


@dataclass(frozen=True)
class EarlyStop:
    patience: int  # epochs in a row without an improvement before the run stops
    min_delta: float = 0.0  # an improvement must beat the best by more than this

    def __post_init__(self) -> None:
        if isinstance(self.patience, bool) or not isinstance(self.patience, int) or self.patience < 1:
            raise ConfigError(f"early_stop patience must be a whole number of epochs, at least 1; "
                              f"got {self.patience!r}.",
                              fix="e.g. early_stop=5 (stop after 5 epochs without improvement); None turns it off")
        if not isinstance(self.min_delta, (int, float)) or isinstance(self.min_delta, bool) \
                or not math.isfinite(self.min_delta) or self.min_delta < 0:
            raise ConfigError(f"early_stop min_delta must be a number >= 0; got {self.min_delta!r}.",
                              fix="e.g. early_stop={'patience': 5, 'min_delta': 0.001}, or leave min_delta out (0)")


def early_stop_from(value: Any) -> EarlyStop | None:
    """``fit(early_stop=...)``: None (off), a patience (``5``), a mapping or an object with ``patience`` and
    optionally ``min_delta`` (e.g. the config's ``train.early_stop`` section)."""
    if value is None or isinstance(value, EarlyStop):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return EarlyStop(value)
    if isinstance(value, dict):
        unknown = set(value) - {"patience", "min_delta"}
        if unknown or "patience" not in value:
            raise ConfigError(f"early_stop takes 'patience' and 'min_delta'; got the keys {sorted(value)}.",
                              fix="e.g. early_stop={'patience': 5, 'min_delta': 0.001}")
        return EarlyStop(value["patience"], value.get("min_delta", 0.0))
    if hasattr(value, "patience"):
        if value.patience is None:
            return None
        return EarlyStop(value.patience, getattr(value, "min_delta", 0.0))
    raise ConfigError(f"early_stop must be a patience (int), a dict or None; got {type(value).__name__}.",
                      fix="e.g. early_stop=5, or early_stop={'patience': 5, 'min_delta': 0.001}")


def update(stop: EarlyStop, state: Any, value: float, *, higher: bool, monitor: str) -> None:
    """Count the epoch just ended (``state.epoch`` is still its index) and decide whether the run stops."""
    if math.isfinite(value) and (state.stop_best is None
                                 or (value - state.stop_best > stop.min_delta if higher
                                     else state.stop_best - value > stop.min_delta)):
        state.stop_best, state.stale_epochs = value, 0
        return
    state.stale_epochs += 1
    if state.stale_epochs >= stop.patience:
        epoch = state.epoch + 1
        state.stopped_epoch = epoch
        plural = "" if stop.patience == 1 else "s"
        state.stop_reason = (f"early stop after epoch {epoch}: {monitor} has not improved by more than "
                             f"{stop.min_delta:g} for {stop.patience} epoch{plural}; best epoch {state.best_epoch}")
