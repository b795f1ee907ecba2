"""Find the user's line: the innermost stack frame that is not torch's, trainwell's or Python's."""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import lru_cache
from types import FrameType

import torch

_SKIP = tuple(os.path.dirname(p) + os.sep for p in (torch.__file__,)) + (
    os.path.dirname(os.path.dirname(__file__)) + os.sep,  # trainwell/
    sysconfig.get_paths()["stdlib"] + os.sep,
)


@lru_cache(maxsize=4096)
def _is_user(filename: str) -> bool:
    return not (filename.startswith(_SKIP) or filename.startswith("<"))


def user_frame(start: FrameType | None = None) -> FrameType | None:
    frame = start or sys._getframe(1)
    while frame is not None:
        if _is_user(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def where(start: FrameType | None = None) -> str | None:
    """``"train.py:23"`` for the user's innermost frame (relative to the working folder when inside it)."""
    frame = user_frame(start or sys._getframe(1))
    if frame is None:
        return None
    return _location(frame.f_code.co_filename, frame.f_lineno)


@lru_cache(maxsize=4096)  # a training loop asks for the same few lines every step
def _location(name: str, line: int) -> str:
    try:
        rel = os.path.relpath(name)
        name = rel if not rel.startswith("..") else name
    except ValueError:  # another drive on Windows
        pass
    return f"{name}:{line}"


def where_in_traceback(tb: object) -> str | None:
    """The last user frame of an exception's traceback (where the failing call was written)."""
    last = None
    while tb is not None:
        frame = tb.tb_frame  # type: ignore[attr-defined]
        if _is_user(frame.f_code.co_filename):
            last = (frame.f_code.co_filename, tb.tb_lineno)  # type: ignore[attr-defined]
        tb = tb.tb_next  # type: ignore[attr-defined]
    return None if last is None else _location(*last)


def user_name(obj: object, start: FrameType | None = None, *, frames: int = 3) -> str | None:
    """How the user's code names ``obj``, for a fix written in their words (``net.zero_grad()``): a variable of the
    innermost user frame bound to it, else an attribute of one of its variables (``self.model``; a module's
    submodules count), else the same in up to ``frames`` user frames further out, else a global of the innermost
    frame's module. None when no name is found (a fix then uses generic words). Only stored values are read: no
    property or ``__getattr__`` of the user's runs."""
    frame = user_frame(start or sys._getframe(1))
    innermost = frame
    for _ in range(frames):
        if frame is None:
            break
        found = _name_among(obj, frame.f_locals)
        if found is not None:
            return found
        frame = frame.f_back
        while frame is not None and not _is_user(frame.f_code.co_filename):
            frame = frame.f_back
    if innermost is None:
        return None
    return _name_among(obj, innermost.f_globals, attributes=False)


def _name_among(obj: object, names: object, *, attributes: bool = True) -> str | None:
    try:
        items = list(names.items())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a frame's locals that cannot be listed: no name
        return None
    for name, value in items:
        if value is obj and _plain(name):
            return str(name)
    if not attributes:
        return None
    for name, value in items:
        if not _plain(name) or isinstance(value, (type, int, float, str, bytes, list, dict, tuple)):
            continue
        for attr, held in _stored(value):
            if held is obj and _plain(attr):
                return f"{name}.{attr}"
    return None


def _stored(value: object) -> list[tuple[str, object]]:
    """An object's stored attributes (its ``__dict__``, and a module's submodules), read without running its code."""
    try:
        own = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return []
    if not isinstance(own, dict):
        return []
    pairs = list(own.items())
    modules = own.get("_modules")
    if isinstance(modules, dict):
        pairs += list(modules.items())
    return pairs


def _plain(name: object) -> bool:
    return isinstance(name, str) and name.isidentifier() and not name.startswith("_")
