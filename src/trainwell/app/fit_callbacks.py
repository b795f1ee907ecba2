"""The callbacks ``trainwell.fit`` trains with, besides the caller's own: the progress bar, the loggers, the run
folder's writers (or the steps kept in memory without one), the learning-rate finder's record, the weight average
and the doctor, in the order they must see each event."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell._errors import TrainwellError
from trainwell.engine.callbacks import Callback
from trainwell.engine.strategy import Strategy

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer

LOG_EVERY = 10  # steps between reads of the loss from the device (and TensorBoard points)


@dataclass
class FitCallbacks:
    """All of them in order, and the two ``fit`` reads again after training."""

    all: list[Callback]
    ema: Any = None  # the weight average, whose weights the returned model gets
    doctor: Any = None  # the doctor, whose findings the result holds
    steps: list[dict[str, Any]] | None = None  # without a run folder: the per-step rows, kept here


def fit_callbacks(callbacks: list[Callback], *, strategy: Strategy, run_dir: Path | None, recorded: dict[str, Any],
                  shown: Callback | None, loggers: list[Callback], ema: float | None, doctor: bool,
                  found: Any = None, lr: float | None = None) -> FitCallbacks:
    """``callbacks`` (the caller's) with trainwell's around them (``shown``: the progress callback, or None); only
    rank 0 prints and writes."""
    main = strategy.is_main
    cbs = list(callbacks)
    parts = FitCallbacks(all=cbs)
    if run_dir is not None:
        from trainwell.app.run import folder_callbacks

        cbs += folder_callbacks(run_dir, checkpoint_every=None, log_every=LOG_EVERY, extra={"config": recorded},
                                main=main, loggers=loggers, release_lock=True)
        if found is not None and main:
            from trainwell.app.auto import Recorded
            from trainwell.app.lr_sweep import record

            cbs.append(Recorded(record(run_dir, found, chosen=lr, configured=None)))
    else:
        parts.steps = []
        cbs += [*loggers, KeepSteps(parts.steps)]
    if shown is not None:
        cbs.insert(0, shown)
    if ema is not None:
        from trainwell.engine.ema import Ema

        parts.ema = Ema(ema)
        cbs.insert(0, parts.ema)
    if doctor and strategy.shards_model:
        raise TrainwellError("doctor=True cannot watch a fit with strategy='fsdp' yet: its checks read whole "
                             "weights and gradients, which no process holds.",
                             fix="doctor=False, or strategy='ddp' while you look for a problem")
    if doctor and main:
        from trainwell.doctor.callback import DoctorCallback

        parts.doctor = DoctorCallback(run_dir=run_dir)
        cbs.append(parts.doctor)
    return parts


class KeepSteps(Callback):
    """The per-step rows in memory, for ``FitResult.steps`` when there is no run folder."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def on_log(self, trainer: Trainer, rows: list[dict[str, Any]]) -> None:
        self.rows.extend(rows)
