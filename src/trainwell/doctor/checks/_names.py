"""The user's own names for the objects a finding talks about, so that a fix reads as the user's code.

A fix that says ``torch.optim.SGD(model.parameters(), lr=0.01)`` to a user whose network is ``net`` and whose
optimizer is ``opt`` must be translated before it can be pasted. ``UserNames.of`` looks, in the user's frames
around the call that was watched (the innermost user frame first, then its callers; each frame's locals, the
attributes of its ``self``, then its globals), for the name bound to the optimizer and to the module whose
parameters the optimizer holds (or the tensors it holds, for hand-made parameters: ``[w, b]``). Found once per
optimizer, on a sampled step; a name that cannot be found keeps the generic word.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch
from torch import nn

from trainwell.doctor.where import _is_user

MAX_FRAMES = 4  # user frames looked at, innermost first
MAX_VALUES = 2000  # values looked at per scope (a notebook's globals can be large)


@dataclass(frozen=True)
class UserNames:
    optimizer: str = "optimizer"
    params: str = "model.parameters()"  # what the optimizer is built over, as the user would write it

    @staticmethod
    def of(frame: Any, optimizer: torch.optim.Optimizer) -> UserNames:
        """The names seen from ``frame`` (a frame of the watched call, or anything else: then the defaults)."""
        if type(frame) is not FrameType:
            return UserNames()
        owned = [p for g in optimizer.param_groups for p in g["params"]]
        ids = {id(p) for p in owned}
        opt_name: str | None = None
        model: tuple[int, str] | None = None  # (parameters it shares with the optimizer, name)
        tensors: dict[int, str] = {}
        for scope in _scopes(frame):
            for name, value in scope:
                if name.startswith("__") or name == "self":
                    continue
                if value is optimizer:
                    opt_name = opt_name or name
                elif isinstance(value, nn.Module):
                    shared = sum(1 for p in value.parameters() if id(p) in ids)
                    # the module that holds the optimizer's parameters (all of them, or the most)
                    if shared and (model is None or shared > model[0]):
                        model = (shared, name)
                elif isinstance(value, torch.Tensor) and id(value) in ids:
                    tensors.setdefault(id(value), name)
        if model is not None and model[0] == len(owned):
            params = f"{model[1]}.parameters()"
        elif owned and all(id(p) in tensors for p in owned) and len(owned) <= 6:
            params = "[" + ", ".join(tensors[id(p)] for p in owned) + "]"
        elif model is not None:
            params = f"{model[1]}.parameters()"
        else:
            params = UserNames.params
        return UserNames(optimizer=opt_name or UserNames.optimizer, params=params)


def _scopes(frame: FrameType | None) -> list[list[tuple[str, Any]]]:
    """(name, value) lists: each user frame's locals and its ``self``'s attributes, innermost first, then the
    outermost frame's globals."""
    out: list[list[tuple[str, Any]]] = []
    globals_: dict[str, Any] | None = None
    seen = 0
    while frame is not None and seen < MAX_FRAMES:
        if _is_user(frame.f_code.co_filename):
            seen += 1
            local = frame.f_locals
            out.append(list(local.items())[:MAX_VALUES])
            me = local.get("self")
            attrs = getattr(me, "__dict__", None) if me is not None else None
            if isinstance(attrs, dict):
                items = list(attrs.items())
                modules = attrs.get("_modules")  # an nn.Module keeps its sub-modules apart
                if isinstance(modules, dict):
                    items += list(modules.items())
                out.append([(f"self.{k}", v) for k, v in items[:MAX_VALUES] if not k.startswith("_")])
            globals_ = frame.f_globals
        frame = frame.f_back
    if globals_ is not None:
        out.append(list(globals_.items())[:MAX_VALUES])
    return out
