"""FSDP: models bigger than one process. Each process holds a shard of every parameter, of its gradient and of its
optimizer state (PyTorch's FSDP2, ``torch.distributed.fsdp.fully_shard``), gathering a block's whole parameters
only while that block computes.

What is sharded: every module below the root holding at least ``min_share`` of the model's parameters (and, inside
it, its own children that do), innermost first; then the model itself, which takes whatever is left (the guide's
A6.2: when one card cannot hold the model, split the model, not the data). A model with no such block is sharded
as one unit.

Everything else is DDP's (the collectives, the shares of each batch, the gradient factor: FSDP averages gradients
over the processes as DDP does), with these differences:

- evaluation runs through the sharded module itself (its forward gathers parameters), so every process makes the
  same forward calls: stand-in batches are computed and dropped (``lockstep_eval``);
- the last checkpoint is sharded, ``checkpoints/last.shards/``: every process writes its own pieces, none gathers
  the whole (``trainwell.engine.shards``); a run saved by 2 processes resumes on 2 or on 1, each process reading
  what it holds;
- ``best.pt`` is consolidated: rank 0 receives the whole model's weights and optimizer state, an ordinary state
  dict with plain keys, so ``predict``, ``export`` and the report read it unchanged (``model_state`` and
  ``optimizer_state`` below; loading one hands rank 0's copy to every shard);
- rank 0's end-of-run figures run on a consolidated copy of the model, since a sharded forward on one process
  alone would wait for the others forever (``trainwell.app.run.finish_run``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import torch
from torch import nn

from trainwell._spread import SHARD_MIN_SHARE
from trainwell.engine.precision import Precision
from trainwell.engine.strategy import DDP

def shard_units(model: nn.Module, min_share: float = SHARD_MIN_SHARE) -> list[nn.Module]:
    """The modules ``fully_shard`` is applied to, innermost first, the model last."""
    total = sum(p.numel() for p in model.parameters())
    units: list[nn.Module] = []

    def visit(module: nn.Module) -> None:
        for child in module.children():
            if sum(p.numel() for p in child.parameters()) >= min_share * total > 0:
                visit(child)
                units.append(child)

    visit(model)
    return [*units, model]


class FSDP(DDP):
    """One process per device under torchrun, each holding a shard of the model (FSDP2)."""

    name = "fsdp"
    lockstep_eval = True
    shards_model = True

    def __init__(self, device: torch.device, *, min_share: float = SHARD_MIN_SHARE) -> None:
        _check_torch()
        super().__init__(device)
        self.min_share = min_share
        self._compute: torch.dtype | None = None  # mixed precision: FSDP's policy on every unit (adopt_precision)
        self._replaced: dict[int, str] = {}  # id of a whole parameter -> its name, once sharded

    def wrap(self, model: nn.Module) -> nn.Module:
        from torch.distributed.fsdp import fully_shard

        self._replaced = {id(p): name for name, p in model.named_parameters()}
        units = shard_units(model, self.min_share)
        if self._compute is not None:  # BatchNorm keeps float32 weights beside its float32 statistics: a unit of its own
            norms = {id(m): m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)
                     and m is not model and next(m.parameters(), None) is not None}
            for norm in norms.values():
                fully_shard(norm, **self._policy(root=False, float32=True))
            units = [u for u in units if id(u) not in norms]
        for unit in units:
            fully_shard(unit, **self._policy(root=unit is model))
        return model  # sharded in place: each parameter is now a new Parameter holding this process's shard

    def adopt_precision(self, precision: Precision) -> Precision:
        """bf16-mixed and 16-mixed through FSDP's own policy: each block's parameters gathered and computed in
        bfloat16 / float16, the gradients reduced and kept in float32 beside the float32 shards the optimizer
        steps, the model's outputs cast back to float32 so the loss is computed in float32 (as autocast does); the
        plugin stops autocasting. 16-mixed keeps its gradient scaler: a step is skipped on every process when any
        process's shard of a gradient overflowed (``GradScaler`` reduces its check over the sharded gradients)."""
        if precision.dtype is not None:
            self._compute = precision.dtype
            precision.autocasting = False
        return precision

    def _policy(self, *, root: bool, float32: bool = False) -> dict[str, Any]:
        if self._compute is None:
            return {}
        from torch.distributed.fsdp import MixedPrecisionPolicy

        return {"mp_policy": MixedPrecisionPolicy(param_dtype=torch.float32 if float32 else self._compute,
                                                  reduce_dtype=torch.float32, cast_forward_inputs=not float32,
                                                  output_dtype=torch.float32 if root else None)}

    def check_training(self, *, compile: bool, loss_params: bool) -> None:
        from trainwell._errors import ConfigError

        if compile:
            raise ConfigError("The fsdp strategy trains without torch.compile for now.",
                              fix="leave out --compile with fsdp, or use --strategy ddp to compile")
        if loss_params:
            raise ConfigError("The loss has parameters of its own (class centres, task weights); the fsdp strategy "
                              "shards the model only and cannot keep them in its checkpoints yet.",
                              fix="use --strategy ddp for this loss")

    def rebind(self, optimizer: torch.optim.Optimizer, model: nn.Module) -> None:
        """Point the optimizer, built on the whole parameters, at their shards (before it has any state)."""
        now = dict(model.named_parameters())
        for group in optimizer.param_groups:
            group["params"] = [now[self._replaced[id(p)]] if id(p) in self._replaced else p for p in group["params"]]

    def no_sync(self, module: nn.Module) -> AbstractContextManager[object]:
        return _no_gradient_sync(module)

    def eval_module(self, model: nn.Module, forward: nn.Module) -> nn.Module:
        return forward

    def model_state(self, model: nn.Module) -> dict[str, Any]:
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        return get_model_state_dict(model, options=_full())

    def load_model_state(self, model: nn.Module, state: dict[str, Any]) -> None:
        from torch.distributed.checkpoint.state_dict import set_model_state_dict

        set_model_state_dict(model, state, options=_full(load=True))

    def optimizer_state(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

        full = get_optimizer_state_dict(model, optimizer, options=_full())
        return _by_index(full) if full else full

    def load_optimizer_state(self, model: nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
        from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

        set_optimizer_state_dict(model, optimizer, _by_name(state, model, optimizer) if self.is_main else {},
                                 options=_full(load=True))


def _check_torch() -> None:
    """FSDP2 and the sharded checkpoints' storage (safetensors pieces with their offsets) are in recent torch."""
    import inspect

    from trainwell._errors import ConfigError

    try:
        from torch.distributed.checkpoint.hf_storage import HuggingFaceStorageWriter
        from torch.distributed.fsdp import fully_shard  # noqa: F401
        ready = "save_distributed" in inspect.signature(HuggingFaceStorageWriter).parameters
    except ImportError:
        ready = False
    if not ready:
        raise ConfigError(f"The fsdp strategy needs a newer PyTorch than this one ({torch.__version__}): its "
                          "sharding (fully_shard) or sharded checkpoints are not in it.",
                          fix="upgrade PyTorch (`pip install -U torch`), or use --strategy ddp")


def _full(load: bool = False) -> Any:
    """Whole tensors on rank 0's CPU when saving; rank 0's copy handed to every shard when loading."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    if load:
        return StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    return StateDictOptions(full_state_dict=True, cpu_offload=True)


def _by_index(state: dict[str, Any]) -> dict[str, Any]:
    """An optimizer state keyed by parameter names (torch.distributed's) in ``Optimizer.state_dict()``'s form,
    keyed by each parameter's place in the groups: the form one process and DDP save and load."""
    index: dict[str, int] = {}
    groups = []
    for group in state["param_groups"]:
        ids = []
        for name in group["params"]:
            index[name] = len(index)
            ids.append(index[name])
        groups.append({**group, "params": ids})
    return {"state": {index[name]: value for name, value in state["state"].items()}, "param_groups": groups}


def _by_name(state: dict[str, Any], model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The reverse of ``_by_index`` for this model and optimizer (the groups' parameters in their order)."""
    names = {id(p): name for name, p in model.named_parameters()}
    order = [names[id(p)] for group in optimizer.param_groups for p in group["params"]]
    groups = [{**group, "params": [order[i] for i in group["params"]]} for group in state["param_groups"]]
    return {"state": {order[i]: value for i, value in state["state"].items()}, "param_groups": groups}


@contextmanager
def _no_gradient_sync(module: nn.Module) -> Iterator[None]:
    """Micro-batches before a step's last: gradients are kept unreduced and exchanged once, with the last."""
    module.set_requires_gradient_sync(False)  # type: ignore[operator]
    try:
        yield
    finally:
        module.set_requires_gradient_sync(True)  # type: ignore[operator]
