"""Small helpers the checks share: which parameters to watch, gradient and update sizes."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import nn

from trainwell.doctor.events import StepEvent
from trainwell.doctor.session import read_back  # (the checks take it from here, with the other helpers)


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


_FOREACH_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def norm_tensors(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """The 2-norm of each tensor, computed in float32 (a float16 norm overflows from 65,504), left on its
    device: one foreach call for the usual float32 / float16 / bfloat16 tensors, one op each otherwise."""
    if not tensors:
        return []
    # (Not with an empty tensor in the list: torch before 2.6 gave wrong norms for such lists on CUDA, pytorch
    # issue 140066; FSDP shards can be empty.)
    if all(t.dtype in _FOREACH_DTYPES and t.numel() for t in tensors):
        try:
            return list(torch._foreach_norm([t.detach() for t in tensors], 2, dtype=torch.float32))
        except (RuntimeError, TypeError, AttributeError):  # a private op: where it is missing or refuses, one by one
            pass
    # (A complex tensor's norm from its magnitudes: casting it to float would drop the imaginary part, and warn.)
    return [(t.detach().abs() if t.is_complex() else t.detach()).float().norm() for t in tensors]


def norms(tensors: Sequence[torch.Tensor]) -> list[float]:
    """The 2-norm of each tensor (in float32), read back together."""
    return read_back(norm_tensors(tensors))


def _differences(pairs: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> list[torch.Tensor]:
    now, before = [p.detach() for p, _ in pairs], [b for _, b in pairs]
    try:
        return list(torch._foreach_sub(now, before))
    except (RuntimeError, TypeError, AttributeError):  # (see norm_tensors)
        return [a - b for a, b in zip(now, before)]


def change_norms(pairs: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> list[float]:
    """||p - before|| of each (parameter, its copy from before a step), read back together."""
    return norms(_differences(pairs)) if pairs else []


def relative_changes(pairs: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> list[float]:
    """||p - before|| / ||before|| of each (parameter, its copy from before a step), read back together."""
    if not pairs:
        return []
    values = read_back(norm_tensors(_differences(pairs)) + norm_tensors([b for _, b in pairs]))
    k = len(pairs)
    return [d / max(b, 1e-12) for d, b in zip(values[:k], values[k:])]


def step_grad_norms(ev: StepEvent) -> dict[int, float]:
    """id(parameter) -> the norm of its gradient, for each parameter of the stepping optimizer that has one (in
    the optimizer's order): computed for the first check that asks on this step event and kept on it for the
    others (one device op and one wait for all of them, not one per check)."""
    found = ev.grad_norms
    if found is None:
        grads = [(id(p), p.grad) for p in optimizer_params(ev.optimizer) if p.grad is not None]
        found = ev.grad_norms = dict(zip([i for i, _ in grads], norms([g for _, g in grads])))
    return found


def layer_grad_norms(model: nn.Module) -> list[tuple[str, float]]:
    """(name, gradient norm) of each weight matrix / kernel (ndim >= 2), in definition order; read back
    from the device together (one wait, not one per layer)."""
    named = [(name, p.grad) for name, p in model.named_parameters() if p.grad is not None and p.ndim >= 2]
    return [(name, value) for (name, _), value in zip(named, norms([g for _, g in named]))]
