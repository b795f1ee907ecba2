"""Thin wrappers that turn a few library calls into ``CallEvent``s, dispatched before the call runs.

Watched: ``torch.amp.GradScaler``'s ``scale``, ``unscale_``, ``step`` and ``update`` (``torch.cuda.amp.GradScaler``
inherits them), ``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_``, and ``torch.save``. Installed by the
session only when a check handles ``on_call``; undone with the session's other patches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from trainwell.doctor.events import CallEvent

if TYPE_CHECKING:
    from trainwell.doctor.session import Session

SCALER_METHODS = ("scale", "unscale_", "step", "update")
CLIPPING = ("clip_grad_norm_", "clip_grad_value_")


def watch_calls(session: Session) -> None:
    """Patch the watched calls through ``session._patch`` (so that uninstalling undoes them)."""
    from torch.nn.utils import clip_grad

    scaler = torch.amp.GradScaler
    for method in SCALER_METHODS:
        session._patch(scaler, method, _watched(session, f"scaler.{method}", getattr(scaler, method), method=True))
    for name in CLIPPING:  # `torch.nn.utils.clip_grad_norm_` and `from torch.nn.utils.clip_grad import ...`
        original = getattr(clip_grad, name)
        watched = _watched(session, "clip_grad", original)
        session._patch(torch.nn.utils, name, watched)
        session._patch(clip_grad, name, watched)
    session._patch(torch, "save", _watched(session, "torch.save", torch.save))


def _watched(session: Session, name: str, fn: Callable[..., Any], *, method: bool = False) -> Callable[..., Any]:
    from trainwell.doctor.session import _compiling, _where

    def call(*args: Any, **kwargs: Any) -> Any:
        if not session.quiet.active and not _compiling():
            owner, rest = (args[0], args[1:]) if method else (None, args)
            session._dispatch("on_call", CallEvent(name, owner, rest, kwargs, _where()))
        return fn(*args, **kwargs)

    call.__wrapped__ = fn  # type: ignore[attr-defined]
    call.__name__ = getattr(fn, "__name__", name)
    call.__doc__ = fn.__doc__
    return call
