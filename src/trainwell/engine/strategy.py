"""How the work of one optimizer step is spread over processes: the trainer's only view of distribution.

``train.batch_size`` is the global batch, the samples behind one optimizer step. A strategy decides which of
them this process computes; accumulation (``train.accumulate``) splits that share into micro-batches. The
trainer asks the strategy, and nothing else, about processes:

- ``wrap(model)``: the module the forward pass runs through (DDP's wrapper; FSDP2's ``fully_shard`` changes the
  module in place and returns it). The trainer keeps the plain module for ``state_dict``, checkpoints, callbacks.
- ``no_sync(module)``: entered around the forward and backward of every micro-batch but the last of a step, so
  gradients are exchanged once per optimizer step.
- ``gradient_factor``: what each process's loss is multiplied by. The trainer weights every micro-batch's mean
  loss by its share of the *global* batch, so the gradients summed over all processes are the gradient of the
  global batch's mean loss; a strategy that averages gradients over processes (DDP, FSDP) returns
  ``world_size`` here to turn its average back into that sum.
- ``reduce_sum(tensor)``: the sum over processes of a device tensor, without waiting for the device (counted
  targets of a per-token loss); ``reduce_floats(values)``: the sum over processes of host values that were read
  anyway (logged losses, evaluation sums and sample counts).
- ``shard(indices)``: which of a global batch's sample indices this process reads (its contiguous share, so a
  short last batch is split as evenly as it goes). The loader calls it once per global batch.
- ``world_size``, ``rank`` and ``is_main`` (rank 0 writes the run folder).

``SingleDevice`` is the one process of today. A ``DDP`` strategy implements the same methods with
``torch.distributed`` (``DistributedDataParallel`` in ``wrap``, its ``no_sync``, ``all_reduce``), and an FSDP one
with ``torch.distributed.fsdp.fully_shard``; the training loop does not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext

import torch
from torch import nn


class Strategy:
    """The contract between the trainer and a way of running it (one process, DDP, FSDP)."""

    world_size: int = 1
    rank: int = 0

    @property
    def is_main(self) -> bool:
        """Whether this process is rank 0, the one that writes files and prints."""
        return self.rank == 0

    def wrap(self, model: nn.Module) -> nn.Module:
        """The module the forward pass goes through; its parameters are ``model``'s."""
        raise NotImplementedError

    def no_sync(self, module: nn.Module) -> AbstractContextManager[object]:
        """A context in which backward does not exchange gradients (micro-batches before a step's last)."""
        raise NotImplementedError

    @property
    def gradient_factor(self) -> float:
        """The factor on each process's loss that makes the exchanged gradient the global batch's."""
        raise NotImplementedError

    def reduce_sum(self, value: torch.Tensor) -> torch.Tensor:
        """``value`` summed over every process, as a device tensor (no wait for the device)."""
        raise NotImplementedError

    def reduce_floats(self, values: Sequence[float]) -> list[float]:
        """Host values summed over every process, element by element."""
        raise NotImplementedError

    def shard(self, indices: list[int]) -> list[int]:
        """This process's share of one global batch's sample indices."""
        raise NotImplementedError


class SingleDevice(Strategy):
    """One process on one device: the whole global batch is this process's, nothing is exchanged."""

    def wrap(self, model: nn.Module) -> nn.Module:
        return model

    def no_sync(self, module: nn.Module) -> AbstractContextManager[object]:
        return nullcontext()

    @property
    def gradient_factor(self) -> float:
        return 1.0

    def reduce_sum(self, value: torch.Tensor) -> torch.Tensor:
        return value

    def reduce_floats(self, values: Sequence[float]) -> list[float]:
        return list(values)

    def shard(self, indices: list[int]) -> list[int]:
        return indices
