"""Bias-corrected exponential moving averages for loss curves and progress bars."""

from __future__ import annotations

import math
from collections.abc import Sequence


def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    return alpha


class MovingAverage:
    """Debiased exponential moving average updated one value at a time.

    ``alpha`` is the weight of each new value (TensorBoard's smoothing is
    ``1 - alpha``). Non-finite inputs are returned unchanged and leave the
    average untouched, so one NaN step does not poison the rest of the curve.
    """

    def __init__(self, alpha: float = 0.1) -> None:
        self.alpha = _check_alpha(alpha)
        self._decay_pow = 1.0  # (1 - alpha) ** count
        self._count = 0
        self._value = math.nan

    def update(self, x: float) -> float:
        """Add ``x`` and return the new smoothed value (or ``x`` itself if it is not finite)."""
        x = float(x)
        if not math.isfinite(x):
            return x
        self._count += 1
        self._decay_pow *= 1.0 - self.alpha
        if self._count == 1:
            self._value = x
        else:
            # Incremental form of ema / (1 - decay**n): the first output equals the
            # input and a constant input stays exactly constant (no float drift).
            gain = self.alpha / (1.0 - self._decay_pow)
            self._value += gain * (x - self._value)
        return self._value

    @property
    def value(self) -> float:
        """The current smoothed value; NaN before the first finite update."""
        return self._value

    @property
    def count(self) -> int:
        """How many finite values have been averaged."""
        return self._count


def ema(values: Sequence[float], alpha: float = 0.1) -> list[float]:
    """Return the debiased exponential moving average of ``values``.

    Same math as :class:`MovingAverage`: NaN/inf entries appear unchanged at
    their position and do not affect later values.
    """
    avg = MovingAverage(alpha)
    return [avg.update(v) for v in values]
