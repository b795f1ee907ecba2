"""Warnings point where they would without the doctor.

A library function that warns with ``stacklevel=2`` (``F.mse_loss`` on inputs of different sizes, for one)
names its caller's line. When the doctor's wrapper stands between the script and that function, the
caller is the wrapper: Python would print ``session.py`` and the wrapper's own line, keep the
"shown once" record for the wrapper's module, and match ``module=`` filters against trainwell.
``warn`` below stands in for ``warnings.warn`` while a session is installed: it does not count the
wrappers' frames, so the warning gets the file, line, module and once-per-place record that
``python script.py`` gives it. Warnings raised by C code called straight from a wrapper (its
``stacklevel`` is the innermost Python frame) are not redirected.
"""

from __future__ import annotations

import sys
import warnings
from types import CodeType
from typing import Any

WRAPPERS: set[CodeType] = set()  # the code of every wrapper the doctor puts between a script and a library call
_original = warnings.warn


def skipped(fn: Any) -> Any:
    """Register a wrapper function, so that warnings do not count its frame; returns it."""
    WRAPPERS.add(fn.__code__)
    return fn


def warn(message: Any, category: Any = None, stacklevel: int = 1, source: Any = None, **kwargs: Any) -> None:
    """``warnings.warn``, counting ``stacklevel`` over the frames that are not the doctor's wrappers."""
    level = stacklevel
    if stacklevel > 1:
        frame = sys._getframe(1)  # level 1: the function that warns
        counted = 1
        while counted < stacklevel and frame.f_back is not None:
            frame = frame.f_back
            if frame.f_code in WRAPPERS:
                level += 1  # not counted: look one frame further out
            else:
                counted += 1
    _original(message, category, level + 1, source, **kwargs)  # (+1: this frame)


warn.__doc__ = _original.__doc__
