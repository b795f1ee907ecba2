"""Try steps on a run's model and give it back untouched: the learning-rate and batch-size finders train a few
steps on the real model, optimizer and loss, then restore their state and every RNG, so the run that follows
starts from exactly the weights (and draws) it would have had without them."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn
from torch.optim import Optimizer

from trainwell.engine.seed import get_rng_state, set_rng_state


@contextmanager
def preserved(model: nn.Module, loss_fn: Any = None, optimizer: Optimizer | None = None) -> Iterator[None]:
    """Restore ``model``, ``loss_fn`` (when it is a module), ``optimizer`` and every RNG on leaving, whatever
    happened inside (also after an error or an out-of-memory)."""
    weights = _copy(model.state_dict())
    loss_state = _copy(loss_fn.state_dict()) if isinstance(loss_fn, nn.Module) else None
    optimizer_state = copy.deepcopy(optimizer.state_dict()) if optimizer is not None else None
    rng = get_rng_state()
    training = model.training
    try:
        yield
    finally:
        model.load_state_dict(weights)
        model.train(training)
        for p in model.parameters():
            p.grad = None
        if loss_state is not None:
            loss_fn.load_state_dict(loss_state)
        if optimizer is not None and optimizer_state is not None:
            optimizer.load_state_dict(optimizer_state)
        set_rng_state(rng)


def _copy(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v.detach().clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v) for k, v in state.items()}
