"""metrics.csv (a row per epoch) and TensorBoard event files, as training callbacks."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell.engine.callbacks import Callback

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer

COLUMNS = ["epoch", "step", "train_loss", "val_loss", "val_accuracy", "lr", "seconds"]


def write_metrics_csv(path: Path, history: list[dict[str, Any]]) -> None:
    """Rewrite the whole file from the history (small), so a resumed run never duplicates rows."""
    extra = sorted({k for row in history for k in row} - set(COLUMNS) - {"is_best"})
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS + extra, extrasaction="ignore")
        writer.writeheader()
        for row in history:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in COLUMNS + extra})
    os.replace(tmp, path)


class CsvLogger(Callback):
    def __init__(self, path: Path) -> None:
        self.path = path

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        write_metrics_csv(self.path, trainer.state.history)


class TensorBoardLogger(Callback):
    """Scalars every ``log_every`` steps and per epoch; a resumed run purges events past its step."""

    def __init__(self, log_dir: Path, log_every: int = 10) -> None:
        self.log_dir = log_dir
        self.log_every = log_every
        self._writer: Any = None

    def on_fit_start(self, trainer: Trainer) -> None:
        from torch.utils.tensorboard import SummaryWriter

        step = trainer.state.step
        self._writer = SummaryWriter(str(self.log_dir), purge_step=step if step else None)

    def on_train_batch_end(self, trainer: Trainer, loss: float) -> None:
        step = trainer.state.step
        if step % self.log_every == 0:
            self._writer.add_scalar("train/loss", loss, step)
            self._writer.add_scalar("train/lr", trainer.lr(), step)

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        for key in row:
            if key.startswith(("train_", "val_")) and isinstance(row[key], (int, float)):
                self._writer.add_scalar(f"epoch/{key}", row[key], row["step"])
        self._writer.flush()

    def on_fit_end(self, trainer: Trainer) -> None:
        self._close()

    def on_exception(self, trainer: Trainer, error: BaseException) -> None:
        self._close()

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
