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
  anyway, a vector of the same length on every process (the logged losses of the steps every process takes);
  ``reduce_named(values)``: the same for named values that a process may not hold at all (evaluation sums and
  sample counts: a process can have no evaluation batch).
- ``shard(indices)``: which of a global batch's sample indices this process reads (its contiguous share, so a
  short last batch is split as evenly as it goes; lower ranks get the extra samples). The loader calls it once
  per global batch; ``largest_share(n)`` is the biggest process's share of ``n`` samples, so every process can
  plan the same number of micro-batches for a step (DDP needs the same forward/backward calls on every rank).
- ``reduce_gradients(params)``: average over processes the gradients of parameters outside the wrapped module
  (a loss with parameters, e.g. margin-loss class centres), once per step, as DDP does for the model's.
- ``sync_buffers(model)``: rank 0's buffers (BatchNorm running statistics) on every process, before evaluation.
- ``gather(value)``: every process's value, in rank order (metrics that need all outputs, e.g. a ROC AUC).
- ``adopt_precision(plugin)``: the precision plugin to use under this strategy (FSDP's parameters are cast by
  FSDP itself, not by autocast: its plugin stops autocasting).
- ``barrier()``; ``eval_module(model, forward)``: what evaluation runs through; ``clip_gradients(params,
  max_norm)``; ``model_state`` / ``load_model_state`` and ``optimizer_state`` / ``load_optimizer_state``: what a
  checkpoint holds, an ordinary state dict whatever the strategy did to the module (a sharding strategy gathers
  its shards here).
- ``world_size``, ``rank`` and ``is_main`` (rank 0 writes the run folder).

``SingleDevice`` is one process. ``DDP`` implements the same methods with ``torch.distributed``
(``DistributedDataParallel`` in ``wrap``, its ``no_sync``, ``all_reduce``); ``FSDP`` (``engine/fsdp.py``) shards the
model with ``torch.distributed.fsdp.fully_shard``; the training loop is the same for all three.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch
from torch import nn

from trainwell.engine import distributed
from trainwell.engine.precision import Precision
from trainwell.engine.distributed import exchange


class Strategy:
    """The contract between the trainer and a way of running it (one process, DDP, FSDP)."""

    name = "single"  # what summary.json and env.json record as ``strategy``
    world_size: int = 1
    rank: int = 0
    lockstep_eval = False  # evaluation's forward calls must match across processes (stand-ins are computed)
    shards_model = False  # no process holds the whole model: one process alone cannot run its forward

    @property
    def is_main(self) -> bool:
        """Whether this process is rank 0, the one that writes files and prints."""
        return self.rank == 0

    def wrap(self, model: nn.Module) -> nn.Module:
        """The module the forward pass goes through; its parameters are ``model``'s."""
        raise NotImplementedError

    def adopt_precision(self, precision: Precision) -> Precision:
        """Before ``wrap``: the precision plugin the trainer uses under this strategy (FSDP casts parameters itself
        and turns the plugin's autocast off); every other strategy keeps ``precision`` as it is."""
        return precision

    def check_training(self, *, compile: bool, loss_params: bool) -> None:
        """Refuse, with the way out, what this strategy cannot train (``compile``, a loss with parameters of its
        own); every strategy here trains all of it but FSDP."""

    def check_freezing(self) -> None:
        """Refuse, with the way out, a fine-tuning recipe that freezes the backbone for some epochs and then
        unfreezes it, where this strategy cannot follow parameters that start receiving gradients mid-run."""
        if self.world_size > 1:
            from trainwell._errors import ConfigError

            raise ConfigError("Freezing the pretrained backbone for the first epochs (train.finetune.freeze_epochs) "
                              "runs in one process for now: DDP and FSDP fix at the start which parameters "
                              "exchange gradients.",
                              fix="set train.finetune.freeze_epochs=0 for several processes (the backbone then "
                                  "trains from the start at its lower rate, train.finetune.backbone_lr)")

    def rebind(self, optimizer: torch.optim.Optimizer, model: nn.Module) -> None:
        """After ``wrap``: point ``optimizer`` at the parameters the model now holds, where wrapping replaced them
        (sharding does; DDP keeps them)."""

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

    def reduce_named(self, values: dict[str, float]) -> dict[str, float]:
        """Named host values summed over every process, under the union of the names: a process may hold none of
        them (it had no evaluation batch), so the names travel with the values (one gather, the same call on
        every process whatever it holds) instead of a vector whose length could differ between processes."""
        summed: dict[str, float] = {}
        for theirs in self.gather(dict(values)):
            for name, value in theirs.items():
                summed[name] = summed.get(name, 0.0) + value
        return summed

    def shard(self, indices: list[int]) -> list[int]:
        """This process's share of one global batch's sample indices."""
        start, stop = share_bounds(len(indices), self.world_size, self.rank)
        return indices[start:stop]

    def largest_share(self, n: int) -> int:
        """The most samples any process gets of a global batch of ``n`` (rank 0's)."""
        return share_sizes(n, self.world_size)[0]

    def sync_buffers(self, model: nn.Module) -> None:
        """Make every process's buffers rank 0's."""

    def reduce_gradients(self, params: Sequence[nn.Parameter]) -> None:
        """Average ``params``' gradients over the processes (parameters the wrapped module does not hold)."""

    def gather(self, value: Any) -> list[Any]:
        """Every process's ``value``, in rank order."""
        return [value]

    def barrier(self) -> None:
        """Wait until every process gets here (rank 0 has written a file the others read)."""

    def eval_module(self, model: nn.Module, forward: nn.Module) -> nn.Module:
        """The module evaluation runs through: ``forward`` (the wrapped one) or the plain ``model``."""
        return forward

    def clip_gradients(self, params: Iterable[nn.Parameter], max_norm: float) -> None:
        """Scale the gradients so that their global norm is at most ``max_norm`` (``train.grad_clip``)."""
        nn.utils.clip_grad_norm_(params, max_norm)

    def model_state(self, model: nn.Module) -> dict[str, Any]:
        """The model's weights as a checkpoint holds them: an ordinary state dict with plain keys."""
        return model.state_dict()

    def load_model_state(self, model: nn.Module, state: dict[str, Any]) -> None:
        model.load_state_dict(state)

    def optimizer_state(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        """The optimizer's state as a checkpoint holds it."""
        return optimizer.state_dict()

    def load_optimizer_state(self, model: nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
        optimizer.load_state_dict(state)


def share_sizes(n: int, world_size: int) -> list[int]:
    """How many of a global batch's ``n`` samples each rank computes: ``n // world_size`` each and one more for each
    of the first ``n % world_size`` ranks, except that no rank gets a single sample of a batch that has more: a
    1-sample micro-batch breaks BatchNorm in training ("Expected more than 1 value per channel") where one process
    computing the whole batch does not. A batch of fewer than ``2 x world_size`` samples goes out in twos (rank 0
    takes an odd one), and the ranks left without samples run a stand-in of weight 0."""
    if n >= 2 * world_size or n <= 1 or world_size == 1:
        base, extra = divmod(n, world_size)
        return [base + (rank < extra) for rank in range(world_size)]
    pairs = n // 2
    return [2 * (rank < pairs) + (rank == 0) * (n % 2) for rank in range(world_size)]


def share_bounds(n: int, world_size: int, rank: int) -> tuple[int, int]:
    """Where ``rank``'s contiguous share of ``n`` samples starts and stops (``share_sizes``)."""
    sizes = share_sizes(n, world_size)
    start = sum(sizes[:rank])
    return start, start + sizes[rank]


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


class DDP(Strategy):
    """One process per device under torchrun, gradients averaged by ``DistributedDataParallel``.

    The process group must be joined first (``trainwell.engine.distributed.init``). ``sync_bn`` turns the model's
    BatchNorm layers into ``SyncBatchNorm`` (statistics over the whole global micro-batch, not each process's).
    """

    name = "ddp"

    def __init__(self, device: torch.device, *, sync_bn: bool = False) -> None:
        import torch.distributed as dist

        if not dist.is_initialized():
            raise RuntimeError(f"{type(self).__name__} needs the process group: call "
                               "trainwell.engine.distributed.init(device) first")
        self.device = device
        self.world_size = dist.get_world_size()
        self.rank = dist.get_rank()
        self.sync_bn = sync_bn
        self.backend = str(dist.get_backend())

    def wrap(self, model: nn.Module) -> nn.Module:
        from torch.nn.parallel import DistributedDataParallel

        if self.sync_bn:  # in place: the layers keep their parameters and buffers, so the optimizer's stay valid
            nn.SyncBatchNorm.convert_sync_batchnorm(model)
        ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=ids)

    def no_sync(self, module: nn.Module) -> AbstractContextManager[object]:
        inner = getattr(module, "_orig_mod", module)  # a compiled DDP wrapper: its no_sync is the wrapper's
        return inner.no_sync()  # type: ignore[no-any-return, operator]

    @property
    def gradient_factor(self) -> float:
        return float(self.world_size)

    def reduce_sum(self, value: torch.Tensor) -> torch.Tensor:
        import torch.distributed as dist

        value = value.clone()
        with exchange("a summed count"):
            dist.all_reduce(value)
        return value

    def reduce_floats(self, values: Sequence[float]) -> list[float]:
        import torch.distributed as dist

        if not values:
            return []
        where = self.device if self.backend == "nccl" else torch.device("cpu")
        summed = torch.tensor(list(values), dtype=torch.float64, device=where)
        with exchange("the logged losses"):
            dist.all_reduce(summed)
        return summed.tolist()  # type: ignore[no-any-return]

    def reduce_gradients(self, params: Sequence[nn.Parameter]) -> None:
        import torch.distributed as dist

        if not params:
            return
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        # Behind the gradients, one flag per parameter: whether this process has a gradient for it. A parameter
        # no process has a gradient for keeps none, as in one process (a zero gradient would let Adam's momentum
        # and weight decay move it); one that some process has gets the average (the others' samples add 0).
        had = torch.tensor([float(p.grad is not None) for p in params], dtype=grads[0].dtype, device=grads[0].device)
        flat = torch.cat([*(g.reshape(-1) for g in grads), had])
        with exchange("the loss's gradients"):
            dist.all_reduce(flat)  # one exchange for all of them
        *parts, anyone = flat.split([*(g.numel() for g in grads), len(params)])
        for p, part, flag in zip(params, parts, anyone.tolist()):
            p.grad = (part / self.world_size).view_as(p).to(p.dtype) if flag > 0 else None

    def eval_module(self, model: nn.Module, forward: nn.Module) -> nn.Module:
        """The plain module: evaluation needs no gradient exchange, and processes may evaluate different numbers
        of batches, so no collective may wait on a process that has finished."""
        return model

    def barrier(self) -> None:
        distributed.barrier()

    def sync_buffers(self, model: nn.Module) -> None:
        import torch.distributed as dist

        with exchange("rank 0's buffers (BatchNorm statistics)"):
            for buffer in model.buffers():
                dist.broadcast(buffer.data, src=0)

    def gather(self, value: Any) -> list[Any]:
        return distributed.gather(value, what="evaluation figures")

