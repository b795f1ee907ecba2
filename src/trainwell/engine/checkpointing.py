"""The checkpoint callback: ``last.pt`` every epoch (and every N steps, and on Ctrl-C), ``best.pt`` on improvement.

Under a strategy that shards the model (fsdp) the last checkpoint is the folder ``last.shards/`` instead, every
process writing its own part (``trainwell.engine.shards``); ``best.pt`` is still one ordinary file, consolidated on
rank 0, so ``predict``, ``export`` and the report read it as any other run's."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell.engine.callbacks import Callback
from trainwell.engine.checkpoint import FORMAT, atomic_save
from trainwell.engine.shards import SHARDS, save_shards, sharded_state

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
        if trainer.strategy.shards_model:
            self._save_shards(trainer)
            return
        payload = self.payload(trainer)  # every process takes part in the state's exchange
        if self.write:
            atomic_save(payload, self.last)
            self._remove(self.folder / SHARDS)  # a run that changed strategy: one last checkpoint

    def _save_shards(self, trainer: Trainer) -> None:
        tensors, optimizer = sharded_state(trainer.model, trainer.optimizer)
        rest = {"format": FORMAT, **self.extra, **trainer.state_dict(weights=False), **optimizer}
        save_shards(self.folder / SHARDS, tensors, rest, main=self.write, barrier=trainer.strategy.barrier)
        if self.write:
            self._remove(self.last)

    def _remove(self, path: Path) -> None:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists():
            path.unlink()

    def on_train_batch_end(self, trainer: Trainer, loss: Any) -> None:
        if self.every_steps and trainer.state.step % self.every_steps == 0:
            self.save_last(trainer)

    def on_interrupt(self, trainer: Trainer) -> None:
        """Ctrl-C: ``last.pt`` at the step the run stopped after, so ``--resume`` continues from there."""
        self.save_last(trainer)

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        """``best.pt`` first, then ``last.pt``: if the second save fails (full disk, kill), last.pt is still the
        previous epoch's, so ``--resume`` trains this epoch again and writes both."""
        if trainer.strategy.shards_model:  # the whole model is gathered only for a best.pt
            from trainwell.engine.distributed import broadcast

            if broadcast(bool(row.get("is_best") or not self.best.exists())):  # (rank 0 knows what it wrote)
                payload = self.payload(trainer)
                if self.write:
                    atomic_save(payload, self.best)
            self._save_shards(trainer)
            return
        payload = self.payload(trainer)
        if not self.write:
            return
        if row.get("is_best") or not self.best.exists():
            atomic_save(payload, self.best)
        atomic_save(payload, self.last)
        self._remove(self.folder / SHARDS)
