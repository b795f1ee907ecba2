"""Models that start from weights made elsewhere (pretrained, or a checkpoint): what the fine-tuning checks need.

A module counts as loaded when ``load_state_dict`` was called on it before any optimizer trained it (torchvision's
``weights=``, timm's ``pretrained=True`` and a script's own ``model.load_state_dict(torch.load(...))`` all end
there), or when trainwell's loop says so (``model.pretrained``). Copying weights into a model that is already
being trained (a rollback to the best epoch) and into one no optimizer trains (a DQN's target network) is not
fine-tuning, and the checks never ask about the latter. With the module, the statistics each of its BatchNorm
layers arrived with are kept (a copy of its running mean and variance): what the pretrained layers saw.
"""

from __future__ import annotations

import weakref

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm


def tracked_norms(module: nn.Module) -> list[_BatchNorm]:
    """The BatchNorm layers inside ``module`` that keep running statistics."""
    return [m for m in module.modules() if isinstance(m, _BatchNorm) and m.track_running_stats
            and m.running_mean is not None and m.running_var is not None]


class Loaded:
    """The modules loaded before training, and their BatchNorm statistics at that moment."""

    def __init__(self) -> None:
        self._modules: weakref.WeakKeyDictionary[nn.Module, int] = weakref.WeakKeyDictionary()  # -> parameters
        self._stats: weakref.WeakKeyDictionary[nn.Module, tuple[torch.Tensor, torch.Tensor]] = \
            weakref.WeakKeyDictionary()

    def note(self, module: nn.Module) -> None:
        """Remember ``module`` as loaded now, with a copy of its BatchNorm statistics."""
        self._modules[module] = sum(p.numel() for p in module.parameters())
        with torch.no_grad():
            for norm in tracked_norms(module):
                self._stats[norm] = (norm.running_mean.detach().clone(), norm.running_var.detach().clone())

    def __bool__(self) -> bool:
        return len(self._modules) > 0

    def holds(self, model: nn.Module) -> bool:
        """Whether ``model``, or a part of it holding at least half its parameters, was loaded."""
        if not self._modules:
            return False
        if model in self._modules:
            return True
        total = sum(p.numel() for p in model.parameters())
        inside = {id(m) for m in model.modules()}
        return total > 0 and any(id(m) in inside and 2 * n >= total for m, n in list(self._modules.items()))

    def statistics(self, norm: nn.Module) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The running mean and variance ``norm`` was loaded with (None: not loaded)."""
        return self._stats.get(norm)

    def trained_by(self, optimizer: torch.optim.Optimizer) -> nn.Module | None:
        """The loaded module most of whose parameters ``optimizer`` trains (None: it trains none, or only a small
        part such as a new head over a frozen backbone)."""
        owned = {id(p) for g in optimizer.param_groups for p in g["params"] if p.requires_grad}
        for module in list(self._modules.keys()):
            sizes = [(p.numel(), id(p) in owned) for p in module.parameters()]
            total = sum(n for n, _ in sizes)
            if total and 2 * sum(n for n, mine in sizes if mine) > total:
                return module
        return None
