"""Extension points of the loop. Progress, logging, checkpoints, the weight average (and the doctor) are callbacks.

The trainer calls every hook of every callback, in the order of its ``callbacks`` list. Per step:
``on_before_optimizer_step`` (only when some callback overrides it) -> ``on_after_optimizer_step`` ->
``on_train_batch_end``; every ``log_every`` steps (and at each epoch's end) ``on_log`` with the rows read from
the device since the last read. Per epoch: ``on_epoch_start``, ``on_validation_start`` / ``on_validation_end``
around validation, ``on_epoch_end``. If any hook raises, every callback whose ``on_fit_start`` was entered and
whose ``on_fit_end`` has not completed gets ``on_exception`` (so it must tolerate a half-done start); on Ctrl-C
at a step boundary they get ``on_interrupt`` first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from trainwell.engine.trainer import Trainer


class Callback:
    """Override the hooks you need; each receives the trainer (its ``state``, ``model``, ...)."""

    def on_fit_start(self, trainer: Trainer) -> None: ...

    def on_epoch_start(self, trainer: Trainer) -> None: ...

    def on_before_optimizer_step(self, trainer: Trainer) -> None:
        """Gradients are ready (after backward and clipping), the step has not run yet."""

    def on_after_optimizer_step(self, trainer: Trainer) -> None:
        """The optimizer (and a per-step schedule) has stepped and ``state.step`` counts it; runs before
        any callback's ``on_train_batch_end`` (which may save a checkpoint)."""

    def on_train_batch_end(self, trainer: Trainer, loss: torch.Tensor) -> None:
        """``loss`` is the step's detached loss, still on the device: reading it (``float(loss)``) waits for
        the device to finish. The values arrive already read, every ``log_every`` steps, in ``on_log``."""

    def on_log(self, trainer: Trainer, rows: list[dict[str, Any]]) -> None:
        """The steps since the last read, one ``{"step", "loss", "lr"}`` row each (plain floats)."""

    def on_validation_start(self, trainer: Trainer) -> None: ...

    def on_validation_end(self, trainer: Trainer) -> None:
        """Called even when validation raised."""

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        """After validation; ``row`` is the epoch's line of metrics (also in ``state.history``)."""

    def on_fit_end(self, trainer: Trainer) -> None: ...

    def on_interrupt(self, trainer: Trainer) -> None:
        """Ctrl-C (a ``KeyboardInterrupt``) at a step boundary of a single-process run, before ``on_exception``:
        the state is that of a finished step, so a checkpoint saved now resumes exactly (the checkpointer
        saves ``last.pt``)."""

    def on_exception(self, trainer: Trainer, error: BaseException) -> None: ...

    # What a callback keeps in checkpoints.

    def on_save_checkpoint(self, trainer: Trainer, checkpoint: dict[str, Any]) -> None:
        """Add (or change) entries of the checkpoint the trainer is about to return from ``state_dict``."""

    def on_load_checkpoint(self, trainer: Trainer, checkpoint: dict[str, Any]) -> None:
        """After the trainer restored model, optimizer, schedule, RNG and state from ``checkpoint``."""

    # What a callback adds to the run folder's summary.json and report.html once training is over.

    def summary_entries(self, trainer: Trainer) -> dict[str, Any]:
        """Extra ``summary.json`` values (e.g. the doctor's finding ids)."""
        return {}

    def report_sections(self, trainer: Trainer) -> list[tuple[str, str]]:
        """Extra ``report.html`` sections as (heading, HTML body) pairs; the body is escaped by the callback."""
        return []

    def on_run_end(self, trainer: Trainer, summary: dict[str, Any]) -> None:
        """The run folder is complete (summary.json, report.html, README.md written; ``summary`` is summary.json's
        content): e.g. send it elsewhere. Called on rank 0 by ``trainwell train`` and ``fit(out=...)``."""
