"""What training prints: a plain line per epoch and, by default, a rich progress bar with the smoothed loss."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from trainwell._errors import TrainwellError
from trainwell._lang import say
from trainwell.engine.callbacks import Callback
from trainwell.engine.smoothing import MovingAverage

if TYPE_CHECKING:
    from rich.console import Console

    from trainwell.engine.trainer import Trainer

PROGRESS = {True: "bar", False: "lines", "bar": "bar", "lines": "lines", "none": "none"}
# data_wait from which the epoch's line says it: the loader does not keep up (more workers, data.num_workers, or
# smaller images would help)
DATA_WAIT_SAID = 0.2
# The words of the epoch line and the bar, per language (a metric without a word here is shown by its key).
_WORDS: dict[str, tuple[str, str]] = {  # key: (English, Chinese)
    "epoch": ("epoch {n:>3}/{of}", "第 {n:>3}/{of} 轮"),
    "bar": ("epoch {n}/{of}", "第 {n}/{of} 轮"),
    "train_loss": ("train_loss", "训练损失"),
    "val_loss": ("val_loss", "验证损失"),
    "val_accuracy": ("val_acc", "验证准确率"),
    "lr": ("lr", "学习率"),
    "seconds": ("{s:.1f}s", "{s:.1f} 秒"),
    "best": ("best", "最佳"),
    "loss": ("loss", "损失"),
    "waiting": ("waiting for data {p:.0f}%", "等待数据 {p:.0f}%"),
}


def progress_callback(progress: bool | str, console: Console | None = None, lang: str = "en") -> Callback | None:
    """``True``/``"bar"``: the bar and a line per epoch; ``False``/``"lines"``: the lines only; ``"none"``: silence.
    ``lang``: ``en`` or ``zh``."""
    mode = PROGRESS.get(progress) if isinstance(progress, (bool, str)) else None
    if mode is None:
        raise TrainwellError(f"progress must be True, False, 'bar', 'lines' or 'none'; got {progress!r}.",
                             fix="progress=True (bar), False (one line per epoch) or 'none' (print nothing)")
    if mode == "none":
        return None
    return ProgressBar(console, lang=lang) if mode == "bar" else EpochLines(console, lang=lang)


def _fmt(value: Any, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.2f}%" if pct else f"{value:.4f}"


def epoch_line(trainer: Trainer, row: dict[str, Any], lang: str = "en") -> str:
    """``epoch  2/5  train_loss ...  val_loss ...  val_acc ...  lr ...  3.1s`` (rich markup for "best")."""
    word = partial(say, _WORDS, lang)
    best = f" [green]{word('best')}[/]" if row.get("is_best") and row.get("val_loss") is not None else ""
    metrics = "".join(f"  {word(k) if k in _WORDS else k.replace('accuracy', 'acc')} "
                      f"{_fmt(v, pct=k.endswith('accuracy'))}"
                      for k, v in row.items() if k.startswith("val_") and k != "val_loss" and isinstance(v, float))
    wait = row.get("data_wait") or 0.0
    waited = f"  {word('waiting', p=100 * wait)}" if wait >= DATA_WAIT_SAID else ""
    return (f"{word('epoch', n=row['epoch'], of=trainer.epochs)}  {word('train_loss')} {_fmt(row['train_loss'])}  "
            f"{word('val_loss')} {_fmt(row['val_loss'])}{metrics}  {word('lr')} {row['lr']:.2e}  "
            f"{word('seconds', s=row['seconds'])}{waited}{best}")


class EpochLines(Callback):
    """One plain line per epoch with its training and validation results."""

    def __init__(self, console: Console | None = None, lang: str = "en") -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self.lang = lang

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        self.console.print(epoch_line(trainer, row, self.lang), highlight=False, soft_wrap=True)
        st = trainer.state
        if st.stop_reason is not None and st.stopped_epoch == row["epoch"]:
            self.console.print(f"[yellow]{st.stop_reason}[/]", highlight=False, soft_wrap=True)


class ProgressBar(EpochLines):
    """Adds ``epoch i/N``, the batch bar and the smoothed loss (as of the last read from the device) below the lines."""

    def __init__(self, console: Console | None = None, refresh_per_second: float = 4, lang: str = "en") -> None:
        super().__init__(console, lang)
        self.refresh = refresh_per_second
        self.smooth = MovingAverage(alpha=0.05)
        self._progress: Any = None
        self._task: Any = None

    def on_fit_start(self, trainer: Trainer) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn(say(_WORDS, self.lang, "loss") + " {task.fields[loss]}"), TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console, refresh_per_second=self.refresh, transient=True)
        self._progress.start()

    def on_epoch_start(self, trainer: Trainer) -> None:
        st = trainer.state
        total = trainer.steps_per_epoch()
        desc = say(_WORDS, self.lang, "bar", n=st.epoch + 1, of=trainer.epochs)
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
