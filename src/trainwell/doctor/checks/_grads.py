"""Small helpers the checks share: which parameters to watch, gradient and update sizes."""

from __future__ import annotations

import weakref
from collections.abc import Iterable

import torch
from torch import nn


def watched_params(params: Iterable[torch.Tensor], limit: int = 8) -> list[torch.Tensor]:
    """A few trainable parameters, smallest first, so per-step checks stay cheap."""
    trainable = [p for p in params if p.requires_grad]
    return sorted(trainable, key=lambda p: p.numel())[:limit]


_WATCHED: weakref.WeakKeyDictionary[torch.optim.Optimizer, tuple[tuple[int, ...], int, list[torch.Tensor]]] = \
    weakref.WeakKeyDictionary()


def watched_optimizer_params(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    """``watched_params`` of an optimizer, remembered between calls (checks ask several times a step).

    Recomputed when its parameter groups change, and every 200 calls (parameters frozen later)."""
    shape = tuple(len(g["params"]) for g in optimizer.param_groups)
    cached = _WATCHED.get(optimizer)
    if cached is not None and cached[0] == shape and cached[1] < 200:
        _WATCHED[optimizer] = (shape, cached[1] + 1, cached[2])
        return cached[2]
    params = watched_params(optimizer_params(optimizer))
    _WATCHED[optimizer] = (shape, 0, params)
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
