"""Everything about a run's progress that a checkpoint must carry to resume exactly.

Counters and one row per epoch only, so a checkpoint's size does not grow with the steps; the per-step
rows go to the run folder's ``steps.csv`` (``trainwell.report.metrics.StepsCsv``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TrainState:
    epoch: int = 0  # completed epochs
    step: int = 0  # optimizer steps so far (one per global batch, counting any that fp16 skipped on overflow)
    batch_in_epoch: int = 0  # global batches (steps) done in the current, unfinished epoch
    epoch_loss_sum: float = 0.0  # of the current epoch: sum of loss * batch size
    epoch_samples: int = 0
    epoch_parts: dict[str, float] = field(default_factory=dict)  # multi-task: sum of each loss part * batch size
    epoch_hits: dict[str, float] = field(default_factory=dict)  # classification: sum of each accuracy * batch size
    epoch_seconds: float = 0.0
    epoch_wait_seconds: float = 0.0  # of epoch_seconds: time spent waiting for the loader's next batch
    train_seconds: float = 0.0  # time spent training (not validating), all epochs
    samples_seen: int = 0
    best: float | None = None  # best monitored value so far
    best_epoch: int | None = None
    # Early stopping (engine/early_stop.py): the best value at the last improvement by more than min_delta, the
    # epochs since, and once patience ran out the epoch it stopped after and why.
    stop_best: float | None = None
    stale_epochs: int = 0
    stopped_epoch: int | None = None
    stop_reason: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)  # one row per epoch

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainState:
        d = dict(d)
        d.pop("steps", None)  # checkpoints written before steps.csv kept every step's row here
        return cls(**d)
