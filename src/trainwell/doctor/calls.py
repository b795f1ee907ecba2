"""Thin wrappers that turn a few library calls into ``CallEvent``s, dispatched before the call runs.

Watched: ``torch.amp.GradScaler``'s ``scale``, ``unscale_``, ``step`` and ``update`` (``torch.cuda.amp.GradScaler``
inherits them), ``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_``, ``torch.save``, and, in one process of a multi-process
run only (``session.cross_rank``), ``open`` for writing (``"w"`` / ``"x"`` modes: event ``"open"``). Installed by
the session only when a check handles ``on_call``; undone with the session's other patches.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import builtins

import torch

from trainwell.doctor.events import CallEvent
from trainwell.doctor.warnsite import skipped, stand_in

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
    if session.cross_rank:
        session._patch(builtins, "open", _watched_open(session, builtins.open))


def _watched(session: Session, name: str, fn: Callable[..., Any], *, method: bool = False) -> Callable[..., Any]:
    from trainwell.doctor.session import _compiling

    def call(*args: Any, **kwargs: Any) -> Any:
        if not session.quiet.active and not _compiling():
            owner, rest = (args[0], args[1:]) if method else (None, args)
            session._dispatch("on_call", CallEvent(name, owner, rest, kwargs, sys._getframe(1)))
        return fn(*args, **kwargs)

    return stand_in(call, fn)


def _watched_open(session: Session, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``open`` that reports the files opened for writing from scratch (the only calls that pay for a location)."""
    watched = _watched(session, "open", fn)

    def open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - stands in for open
        if isinstance(mode, str) and ("w" in mode or "x" in mode):
            return watched(file, mode, *args, **kwargs)
        return fn(file, mode, *args, **kwargs)

    open.__wrapped__ = fn  # type: ignore[attr-defined]
    open.__doc__ = fn.__doc__
    return skipped(open)
