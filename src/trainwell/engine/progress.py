"""What training prints: a plain line per epoch and, by default, a rich progress bar with the smoothed loss."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainwell._errors import TrainwellError
from trainwell.engine.callbacks import Callback
from trainwell.engine.smoothing import MovingAverage

if TYPE_CHECKING:
    from rich.console import Console

    from trainwell.engine.trainer import Trainer

PROGRESS = {True: "bar", False: "lines", "bar": "bar", "lines": "lines", "none": "none"}
# data_wait from which the epoch's line says it: the loader does not keep up (more workers, data.num_workers, or
# smaller images would help)
DATA_WAIT_SAID = 0.2


def progress_callback(progress: bool | str, console: Console | None = None) -> Callback | None:
    """``True``/``"bar"``: the bar and a line per epoch; ``False``/``"lines"``: the lines only; ``"none"``: silence."""
    mode = PROGRESS.get(progress) if isinstance(progress, (bool, str)) else None
    if mode is None:
        raise TrainwellError(f"progress must be True, False, 'bar', 'lines' or 'none'; got {progress!r}.",
                             fix="progress=True (bar), False (one line per epoch) or 'none' (print nothing)")
    if mode == "none":
        return None
    return ProgressBar(console) if mode == "bar" else EpochLines(console)


def _fmt(value: Any, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.2f}%" if pct else f"{value:.4f}"


def epoch_line(trainer: Trainer, row: dict[str, Any]) -> str:
    """``epoch  2/5  train_loss ...  val_loss ...  val_acc ...  lr ...  3.1s`` (rich markup for "best")."""
    best = " [green]best[/]" if row.get("is_best") and row.get("val_loss") is not None else ""
    metrics = "".join(f"  {k.replace('accuracy', 'acc')} {_fmt(v, pct=k.endswith('accuracy'))}"
                      for k, v in row.items() if k.startswith("val_") and k != "val_loss" and isinstance(v, float))
    wait = row.get("data_wait") or 0.0
    waited = f"  waiting for data {100 * wait:.0f}%" if wait >= DATA_WAIT_SAID else ""
    return (f"epoch {row['epoch']:>3}/{trainer.epochs}  train_loss {_fmt(row['train_loss'])}  "
            f"val_loss {_fmt(row['val_loss'])}{metrics}  lr {row['lr']:.2e}  {row['seconds']:.1f}s{waited}{best}")


class EpochLines(Callback):
    """One plain line per epoch with its training and validation results."""

    def __init__(self, console: Console | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True)

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        self.console.print(epoch_line(trainer, row), highlight=False, soft_wrap=True)
        st = trainer.state
        if st.stop_reason is not None and st.stopped_epoch == row["epoch"]:
            self.console.print(f"[yellow]{st.stop_reason}[/]", highlight=False, soft_wrap=True)


class ProgressBar(EpochLines):
    """Adds ``epoch i/N``, the batch bar and the smoothed loss (as of the last read from the device) below the lines."""

    def __init__(self, console: Console | None = None, refresh_per_second: float = 4) -> None:
        super().__init__(console)
        self.refresh = refresh_per_second
        self.smooth = MovingAverage(alpha=0.05)
        self._progress: Any = None
        self._task: Any = None

    def on_fit_start(self, trainer: Trainer) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}"), TimeElapsedColumn(), TimeRemainingColumn(),
            console=self.console, refresh_per_second=self.refresh, transient=True)
        self._progress.start()

    def on_epoch_start(self, trainer: Trainer) -> None:
        st = trainer.state
        total = trainer.steps_per_epoch()
        desc = f"epoch {st.epoch + 1}/{trainer.epochs}"
        if self._task is None:
            self._task = self._progress.add_task(desc, total=total, loss="-")
        self._progress.reset(self._task, total=total, completed=st.batch_in_epoch, description=desc, loss="-")

    def on_train_batch_end(self, trainer: Trainer, loss: Any) -> None:
        self._progress.update(self._task, advance=1)

    def on_log(self, trainer: Trainer, rows: list[dict[str, Any]]) -> None:
        if self._progress is None or self._task is None:
            return
        for row in rows:
            value = self.smooth.update(row["loss"])
        self._progress.update(self._task, loss=f"{value:.4f}")

    def on_fit_end(self, trainer: Trainer) -> None:
        self._stop()

    def on_exception(self, trainer: Trainer, error: BaseException) -> None:
        self._stop()

    def _stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
