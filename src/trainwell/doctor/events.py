"""What the doctor's hooks observe, handed to every check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn


@dataclass
class ForwardEvent:
    """A top-level model call (not a call nested inside another module's forward)."""

    module: nn.Module
    inputs: tuple[Any, ...]
    output: Any
    grad_enabled: bool
    where: str | None
    leaf_calls: list[tuple[nn.Module, Any, Any]] = field(default_factory=list)  # (module, input, output) in order
    functional_relus: list[Any] = field(default_factory=list)  # outputs of F.relu / torch.relu calls, in order


@dataclass
class LossEvent:
    name: str  # "cross_entropy", "nll_loss", "mse_loss", ...
    input: Any
    target: Any
    output: torch.Tensor
    kwargs: dict[str, Any]
    where: str | None


@dataclass
class BackwardEvent:
    tensor: torch.Tensor
    where: str | None


@dataclass
class ZeroGradEvent:
    owner: Any  # the optimizer or module whose zero_grad was called
    where: str | None


@dataclass
class StepEvent:
    optimizer: torch.optim.Optimizer
    where: str | None


@dataclass
class BatchEvent:
    batch: Any
    wait_seconds: float  # time the loop waited for this batch
    where: str | None
    iterator: Any = None  # the DataLoader iterator that produced it


@dataclass
class CallEvent:
    """A watched library call is about to run (see ``doctor/calls.py``): a GradScaler's ``scale`` / ``unscale_`` /
    ``step`` / ``update``, gradient clipping, ``torch.save``."""

    name: str  # "scaler.scale", "scaler.unscale_", "scaler.step", "scaler.update", "clip_grad", "torch.save"
    owner: Any  # the GradScaler for its methods, else None
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    where: str | None
