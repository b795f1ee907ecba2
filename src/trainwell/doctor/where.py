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
