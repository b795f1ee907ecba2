"""The monitored value that picks the best epoch (and ``best.pt``), and whether higher or lower is better.

The direction is never guessed from a name: losses (the total and each named part) are minimized, a metric's
values are maximized or minimized as the metric itself declares (``Metric.direction``), and anything else needs
an explicit mode.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection
from typing import Any, Literal

from trainwell._errors import TrainwellError

Mode = Literal["auto", "min", "max"]
MODES = ("auto", "min", "max")


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise TrainwellError(f"The monitor mode must be one of {', '.join(MODES)}; got {mode!r}.",
                             fix="use mode='max' for values where higher is better, 'min' for lower, "
                                 "'auto' to take the direction from the loss or metric")


def _logged(row: dict[str, Any]) -> list[str]:
    return sorted(k for k, v in row.items() if k.startswith(("train_", "val_")) and _is_number(v))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def monitored_value(row: dict[str, Any], name: str) -> float:
    """The epoch's value of ``name``; an error naming the logged values when it has none."""
    value = row.get(name)
    if _is_number(value):
        return float(value)
    logged = _logged(row)
    close = difflib.get_close_matches(name, logged, n=1, cutoff=0.5)
    suggestion = close[0] if close else (logged[0] if logged else "train_loss")
    hint = f" (did you mean {suggestion!r}?)" if close else ""
    raise TrainwellError(
        f"The monitored value {name!r} is not logged by this run{hint}; it logs {', '.join(logged) or 'nothing'}.",
        fix=f"monitor a logged value: `--set train.monitor={suggestion}` for `trainwell train`, "
            f"fit(monitor={suggestion!r}) from Python")


def direction(name: str, mode: str, *, loss_names: Collection[str], metric: Any) -> Literal["min", "max"]:
    """``"min"`` or ``"max"`` for ``name`` (e.g. ``val_accuracy``): ``mode`` if explicit, else from its definition."""
    if mode in ("min", "max"):
        return mode  # type: ignore[return-value]
    base = name.split("_", 1)[1] if name.startswith(("train_", "val_")) else name
    if base in loss_names:
        return "min"
    declare = getattr(metric, "direction", None)
    found = declare(base) if callable(declare) else None
    if found in ("min", "max"):
        return found  # type: ignore[no-any-return]
    raise TrainwellError(
        f"trainwell does not know whether a higher or a lower {name!r} is better: it is neither a loss nor a value "
        f"whose metric declares its direction.",
        fix="say which: fit(mode='max') or fit(mode='min'); `--set train.monitor_mode=max` (or min) for "
            "`trainwell train`; or give the metric a direction(name) method returning 'max' or 'min'")
