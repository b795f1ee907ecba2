"""metrics.csv (a row per epoch), steps.csv (a row per step) and TensorBoard event files, as training callbacks."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell._files import append_text, atomic_write_text
from trainwell.engine.callbacks import Callback

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer

COLUMNS = ["epoch", "step", "train_loss", "val_loss", "val_accuracy", "lr", "seconds"]
STEP_COLUMNS = ["step", "loss", "lr"]


def write_metrics_csv(path: Path, history: list[dict[str, Any]]) -> None:
    """Rewrite the whole file from the history (small), so a resumed run never duplicates rows."""
    extra = sorted({k for row in history for k in row} - set(COLUMNS) - {"is_best"})
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=COLUMNS + extra, extrasaction="ignore")
    writer.writeheader()
    for row in history:
        writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in COLUMNS + extra})
    atomic_write_text(path, text.getvalue())


class CsvLogger(Callback):
    def __init__(self, path: Path) -> None:
        self.path = path

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        write_metrics_csv(self.path, trainer.state.history)


def read_steps(path: Path) -> list[dict[str, Any]]:
    """The rows of a steps.csv, in order; a last line cut short by a crash (missing fields) is left out."""
    if not path.is_file():
        return []
    rows = []
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            try:
                rows.append({"step": int(row["step"]), "loss": float(row["loss"]), "lr": float(row["lr"])})
            except (TypeError, ValueError):
                continue
    return rows


class StepsCsv(Callback):
    """steps.csv: one row per optimizer step (step, loss, lr), appended as the trainer reads them.

    A resumed run first drops the rows past its checkpoint's step (written after the last save, before the
    run stopped), so the file holds each step once.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def on_fit_start(self, trainer: Trainer) -> None:
        step = trainer.state.step
        kept = [r for r in read_steps(self.path) if r["step"] <= step] if step else []
        text = io.StringIO(newline="")
        writer = csv.writer(text)
        writer.writerow(STEP_COLUMNS)
        writer.writerows([r[k] for k in STEP_COLUMNS] for r in kept)
        atomic_write_text(self.path, text.getvalue())

    def on_log(self, trainer: Trainer, rows: list[dict[str, Any]]) -> None:
        text = io.StringIO(newline="")
        csv.writer(text).writerows([r[k] for k in STEP_COLUMNS] for r in rows)
        append_text(self.path, text.getvalue())


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

    def on_log(self, trainer: Trainer, rows: list[dict[str, Any]]) -> None:
        if self._writer is None:
            return
        for row in rows:
            if row["step"] % self.log_every == 0:
                self._writer.add_scalar("train/loss", row["loss"], row["step"])
                self._writer.add_scalar("train/lr", row["lr"], row["step"])

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
