"""Small helpers the checks share: which parameters to watch, gradient and update sizes."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import torch
from torch import nn


def watched_params(params: Iterable[torch.Tensor], limit: int = 8) -> list[torch.Tensor]:
    """A few trainable parameters, smallest first, so per-step checks stay cheap."""
    trainable = [p for p in params if p.requires_grad]
    return sorted(trainable, key=lambda p: p.numel())[:limit]


# id(optimizer) -> [weak reference, group sizes, calls since computed, params]: keyed by id, not a
# WeakKeyDictionary, since checks ask every step and a WeakKeyDictionary makes a weak reference per lookup.
_WATCHED: dict[int, list[Any]] = {}


def watched_optimizer_params(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    """``watched_params`` of an optimizer, remembered between calls (checks ask several times a step).

    Recomputed when its parameter groups change, and every 200 calls (parameters frozen later)."""
    groups = optimizer.param_groups
    shape: Any = len(groups[0]["params"]) if len(groups) == 1 else tuple(len(g["params"]) for g in groups)
    cached = _WATCHED.get(id(optimizer))
    if cached is not None and cached[0]() is optimizer and cached[1] == shape and cached[2] < 200:
        cached[2] += 1
        return cached[3]
    params = watched_params(optimizer_params(optimizer))
    key = id(optimizer)

    def forget(ref: weakref.ref[Any]) -> None:  # the optimizer is gone: let go of its parameters
        entry = _WATCHED.get(key)
        if entry is not None and entry[0] is ref:
            del _WATCHED[key]

    _WATCHED[key] = [weakref.ref(optimizer, forget), shape, 0, params]
    return params


def optimizer_params(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [p for g in optimizer.param_groups for p in g["params"]]


def grad_is_clear(p: torch.Tensor) -> bool:
    """True when the gradient was cleared: ``None`` or all zeros."""
    return p.grad is None or not bool(p.grad.any())


def grad_norm(params: Iterable[torch.Tensor]) -> float:
    norms = [p.grad.detach().float().norm() for p in params if p.grad is not None]
    return float(torch.stack(norms).norm()) if norms else 0.0


def layer_grad_norms(model: nn.Module) -> list[tuple[str, float]]:
    """(name, gradient norm) of each weight matrix / kernel (ndim >= 2), in definition order; read back
    from the device together (one wait, not one per layer)."""
    named = [(name, p.grad.detach().float().norm()) for name, p in model.named_parameters()
             if p.grad is not None and p.ndim >= 2]
    if len({norm.device for _, norm in named}) > 1:  # a model split over devices
        return [(name, float(norm)) for name, norm in named]
    values = torch.stack([norm for _, norm in named]).tolist() if named else []
    return [(name, value) for (name, _), value in zip(named, values)]
