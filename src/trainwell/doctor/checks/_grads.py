"""Small helpers the checks share: which parameters to watch, gradient and update sizes."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn


def watched_params(params: Iterable[torch.Tensor], limit: int = 8) -> list[torch.Tensor]:
    """A few trainable parameters, smallest first, so per-step checks stay cheap."""
    trainable = [p for p in params if p.requires_grad]
    return sorted(trainable, key=lambda p: p.numel())[:limit]


def optimizer_params(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [p for g in optimizer.param_groups for p in g["params"]]


def grad_is_clear(p: torch.Tensor) -> bool:
    """True when the gradient was cleared: ``None`` or all zeros."""
    return p.grad is None or not bool(p.grad.any())


def grad_norm(params: Iterable[torch.Tensor]) -> float:
    norms = [p.grad.detach().float().norm() for p in params if p.grad is not None]
    return float(torch.stack(norms).norm()) if norms else 0.0


def layer_grad_norms(model: nn.Module) -> list[tuple[str, float]]:
    """(name, gradient norm) of each weight matrix / kernel (ndim >= 2), in definition order."""
    return [(name, float(p.grad.detach().float().norm())) for name, p in model.named_parameters()
            if p.grad is not None and p.ndim >= 2]
