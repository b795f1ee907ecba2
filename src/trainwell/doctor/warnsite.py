"""Warnings point where they would without the doctor.

A library function that warns with ``stacklevel=2`` (``F.mse_loss`` on inputs of different sizes, for one)
names its caller's line. When the doctor's wrapper stands between the script and that function, the
caller is the wrapper: Python would print ``session.py`` and the wrapper's own line, keep the
"shown once" record for the wrapper's module, and match ``module=`` filters against trainwell.
``past_wrappers(warnings.warn)`` stands in for ``warnings.warn`` while a session is installed: it does not
count the wrappers' frames, so the warning gets the file, line, module and once-per-place record that
``python script.py`` gives it. Warnings raised by C code called straight from a wrapper (they name the
innermost Python frame) are not redirected.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

WRAPPERS: set[CodeType] = set()  # the code of every wrapper the doctor puts between a script and a library call
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # the doctor's files (skip_file_prefixes)


def skipped(fn: F) -> F:
    """Register a wrapper function, so that warnings do not count its frame; returns it."""
    WRAPPERS.add(fn.__code__)  # type: ignore[attr-defined]
    return fn


def stand_in(wrapper: F, original: Callable[..., Any]) -> F:
    """``wrapper`` made to stand for the library function ``original``: its name, doc and ``__wrapped__``;
    skipped by warnings (above); and traced as ``original`` by torch.compile (``_torchdynamo_inline``: the
    wrapper does nothing while Dynamo traces, and Dynamo's table of torch functions, made once per process from
    ``torch.relu``, ``F.mse_loss`` ... as they are at the time, keeps the originals even when it is made while
    the doctor's stand-ins are in place; else every later call of the original breaks the compiled graph)."""
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    wrapper._torchdynamo_inline = original  # type: ignore[attr-defined]
    wrapper.__name__ = getattr(original, "__name__", wrapper.__name__)
    wrapper.__doc__ = original.__doc__
    _scripted_as(wrapper, original)
    return skipped(wrapper)


def _scripted_as(wrapper: Callable[..., Any], original: Callable[..., Any]) -> None:
    """TorchScript compiles ``original`` wherever it meets ``wrapper`` (``torch.jit.script`` of a model calling
    ``F.relu`` while it is watched): registered as a boolean dispatch on an argument no call has, whose two
    branches are ``original``. Without it TorchScript reads the original's source (``__wrapped__``) with the
    wrapper's globals, and fails."""
    try:
        from torch._jit_internal import boolean_dispatched

        boolean_dispatched[wrapper] = {"if_true": original, "if_false": original, "index": 1 << 20,
                                       "default": False, "arg_name": "_trainwell_never_passed"}
    except ImportError:  # a torch without the table: torch.jit.script of a watched model fails as it did before
        pass


def past_wrappers(original: Callable[..., None]) -> Callable[..., None]:
    """``original`` (the ``warnings.warn`` in place at install) counting ``stacklevel`` over the frames that are
    not the doctor's wrappers. One stand-in per original, made once (see ``_scripted_builtin``)."""
    kept = _KEPT.get(id(original))
    if kept is not None and kept[0] is original:
        return kept[1]

    def warn(message: Any, category: Any = None, stacklevel: int = 1, source: Any = None, **kwargs: Any) -> None:
        level = max(stacklevel, 1)  # (Python reads a level below 1 as 1: the function that warns)
        prefixes = tuple(kwargs.get("skip_file_prefixes") or ())
        if prefixes:
            # Python 3.12+ skips the frames under these prefixes itself (the doctor's own added), counting at least
            # 2 levels from the frame that calls it: this one, or, when that is skipped too, the one that warns.
            # (Written from Python's documented rules; never run here, where Python is 3.11.)
            kwargs["skip_file_prefixes"] = (*prefixes, _HERE)
            try:
                warner = sys._getframe(1).f_code.co_filename
            except ValueError:
                warner = ""
            original(message, category, max(level, 2) + (0 if warner.startswith(prefixes) else 1), source, **kwargs)
            return
        if level > 1:
            try:
                frame = sys._getframe(1)  # level 1: the function that warns
            except ValueError:  # no Python caller at all: nothing to count past
                frame = None
            counted = 1
            while frame is not None and counted < stacklevel and frame.f_back is not None:
                frame = frame.f_back
                if frame.f_code in WRAPPERS:
                    level += 1  # not counted: look one frame further out
                else:
                    counted += 1
        original(message, category, level + 1, source, **kwargs)  # (+1: this frame)

    warn.__doc__ = original.__doc__
    _scripted_builtin(warn, original)
    return warn


_KEPT: dict[int, tuple[Callable[..., Any], Callable[..., Any]]] = {}  # id(original) -> (original, its stand-in)


def _scripted_builtin(wrapper: Callable[..., Any], original: Callable[..., Any]) -> None:
    """TorchScript compiles ``warnings.warn`` as its builtin ``aten::warn`` (the library's loss functions call it:
    ``torch.jit.script(nn.CrossEntropyLoss())``); the stand-in is given the same builtin, else TorchScript reads
    its source and fails on its ``**kwargs``. TorchScript's table is keyed by ``id``: the stand-in is kept alive
    (``past_wrappers`` makes one per original), so that no later function can take its id."""
    jit_builtins = sys.modules.get("torch.jit._builtins")
    if jit_builtins is None:  # torch not imported yet: its table, made at import, will hold the stand-in itself
        return
    op = jit_builtins._find_builtin(original)
    if op is None:
        return
    _KEPT[id(original)] = (original, wrapper)
    jit_builtins._register_builtin(wrapper, op)
