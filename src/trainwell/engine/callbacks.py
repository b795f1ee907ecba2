"""Extension points of the loop. Progress, logging, checkpoints (and the doctor) are callbacks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer


class Callback:
    """Override the hooks you need; each receives the trainer (its ``state``, ``model``, ...)."""

    def on_fit_start(self, trainer: Trainer) -> None: ...

    def on_epoch_start(self, trainer: Trainer) -> None: ...

    def on_before_optimizer_step(self, trainer: Trainer) -> None:
        """Gradients are ready (after backward and clipping), the step has not run yet."""

    def on_train_batch_end(self, trainer: Trainer, loss: float) -> None: ...

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        """After validation; ``row`` is the epoch's line of metrics (also in ``state.history``)."""

    def on_fit_end(self, trainer: Trainer) -> None: ...

    def on_exception(self, trainer: Trainer, error: BaseException) -> None: ...

    # What a callback adds to the run folder's summary.json and report.html once training is over.

    def summary_entries(self, trainer: Trainer) -> dict[str, Any]:
        """Extra ``summary.json`` values (e.g. the doctor's finding ids)."""
        return {}

    def report_sections(self, trainer: Trainer) -> list[tuple[str, str]]:
        """Extra ``report.html`` sections as (heading, HTML body) pairs; the body is escaped by the callback."""
        return []
