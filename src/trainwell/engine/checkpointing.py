"""The checkpoint callback: ``last.pt`` every epoch (and every N steps, and on Ctrl-C), ``best.pt`` on improvement."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell.engine.callbacks import Callback
from trainwell.engine.checkpoint import FORMAT, atomic_save

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer


class Checkpointer(Callback):
    """Saves everything needed for exact resume plus ``extra`` (config, preprocessing, classes)."""

    def __init__(self, folder: Path, *, every_steps: int | None = None, extra: dict[str, Any] | None = None,
                 write: bool = True) -> None:
        self.folder = folder
        self.every_steps = every_steps
        self.extra = extra or {}
        self.write = write  # False on every process but rank 0: it takes part in the state's exchange, saves nothing

    @property
    def last(self) -> Path:
        return self.folder / "last.pt"

    @property
    def best(self) -> Path:
        return self.folder / "best.pt"

    def payload(self, trainer: Trainer) -> dict[str, Any]:
        return {"format": FORMAT, **self.extra, **trainer.state_dict()}

    def save_last(self, trainer: Trainer) -> None:
        payload = self.payload(trainer)  # every process takes part in the state's exchange
        if self.write:
            atomic_save(payload, self.last)

    def on_train_batch_end(self, trainer: Trainer, loss: Any) -> None:
        if self.every_steps and trainer.state.step % self.every_steps == 0:
            self.save_last(trainer)

    def on_interrupt(self, trainer: Trainer) -> None:
        """Ctrl-C: ``last.pt`` at the step the run stopped after, so ``--resume`` continues from there."""
        self.save_last(trainer)

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        """``best.pt`` first, then ``last.pt``: if the second save fails (full disk, kill), last.pt is still the
        previous epoch's, so ``--resume`` trains this epoch again and writes both."""
        payload = self.payload(trainer)
        if not self.write:
            return
        if row.get("is_best") or not self.best.exists():
            atomic_save(payload, self.best)
        atomic_save(payload, self.last)
