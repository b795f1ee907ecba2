"""What ``trainwell.fit`` makes of the data it is given: a loader of global batches in micro-batches, each process
reading its share (``as_loader``), and the optimizer steps an epoch makes (``planned_steps``, held to by
``StepsPerEpoch`` for data without a length)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torch.utils.data import DataLoader, Dataset, DistributedSampler, IterableDataset

from trainwell._errors import TrainwellError
from trainwell.data.loading import EpochLoader
from trainwell.engine.accumulate import steps_per_epoch as optimizer_steps
from trainwell.engine.callbacks import Callback
from trainwell.engine.strategy import Strategy

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer


def as_loader(data: Dataset | DataLoader | Any, batch_size: int, shuffle: bool, seed: int,
               micro: int | None = None, strategy: Strategy | None = None) -> Any:
    """``batch_size`` is the global batch, yielded in micro-batches of ``micro`` samples (default: whole), each
    process reading its share of every global batch (``strategy``)."""
    if data is None:
        return data
    several = strategy is not None and strategy.world_size > 1
    if isinstance(data, DataLoader):
        if several and not isinstance(data.sampler, DistributedSampler) \
                and not isinstance(getattr(data.batch_sampler, "sampler", None), DistributedSampler):
            raise TrainwellError("Under torchrun every process would read all of this DataLoader's batches: the "
                                 "processes would train on the same samples and count each one several times.",
                                 fix="pass the Dataset itself (trainwell gives each process its share of every "
                                     "batch), or build the DataLoader with a DistributedSampler")
        return data
    if isinstance(data, IterableDataset):  # a stream: batched in its own order, it cannot be shuffled
        if several:
            raise TrainwellError("An IterableDataset cannot be split among the processes of a torchrun run: each "
                                 "would read the whole stream.",
                                 fix="pass a map-style Dataset (with __len__ and __getitem__), or a DataLoader "
                                     "over a stream that yields each process its own part")
        return DataLoader(data, batch_size=micro or batch_size)
    if isinstance(data, Dataset) or hasattr(data, "__getitem__"):
        return EpochLoader(data, batch_size=batch_size, shuffle=shuffle, seed=seed, micro_batch_size=micro,
                           sharding=strategy)
    if several:
        raise TrainwellError("Under torchrun, trainwell cannot split an iterable of batches among the processes.",
                             fix="pass a Dataset of (x, y) pairs instead")
    return data  # any iterable of (x, y) batches


def planned_steps(loader: Any, given: int | None, accumulate: int) -> int | None:
    """The optimizer steps of an epoch of the loader, or the number the caller gave for data without a length."""
    known = optimizer_steps(loader, accumulate)
    if given is None:
        return known
    if given < 1 or (known is not None and given != known):
        raise TrainwellError(f"steps_per_epoch={given} does not match the training data, which yields "
                             f"{known if known is not None else 'an unknown number of'} optimizer steps per epoch.",
                             fix="leave steps_per_epoch out for data with a len(); otherwise give the number of "
                                 "optimizer steps one epoch makes (at least 1)")
    return given


class StepsPerEpoch(Callback):
    """Holds data without len() to the steps_per_epoch the schedule was planned for."""

    def __init__(self, expected: int) -> None:
        self.expected = expected

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        history = trainer.state.history
        done = row["step"] - (history[-2]["step"] if len(history) > 1 else 0)
        if done != self.expected:
            raise TrainwellError(f"Epoch {row['epoch']} had {done} steps, but steps_per_epoch={self.expected}: the "
                                 "learning-rate schedule was planned for the wrong length.",
                                 fix=f"pass steps_per_epoch={done} (the optimizer steps one epoch of your data makes)")
