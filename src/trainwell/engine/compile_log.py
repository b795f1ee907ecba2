"""Where torch.compile's messages go during a run: into a log file of the run folder, not the user's terminal.

Compiling logs through the ``torch`` loggers (a missing CUDA runtime on a CPU machine, the recompile limit
reached for a new batch shape) and warns through Python's ``warnings`` from torch's compiler modules. While
:func:`compile_messages` is active, both are written to the log file instead; everything else is unchanged."""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

# The parts of torch whose warnings belong to compiling.
COMPILER_PARTS = ("_dynamo", "_inductor", "_functorch", "fx", "_subclasses", "utils/cpp_extension")


def _from_compiler(filename: str) -> bool:
    path = filename.replace("\\", "/")
    return "/torch/" in path and any(f"/torch/{part}" in path for part in COMPILER_PARTS)


@contextlib.contextmanager
def compile_messages(log: Path | None) -> Iterator[None]:
    """Send the ``torch`` loggers' records and torch's compiler warnings to ``log`` (appended) while active;
    None: change nothing."""
    if log is None:
        yield
        return
    with log.open("a", encoding="utf-8") as out, warnings.catch_warnings():
        handler = logging.StreamHandler(out)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        moved = _take_torch_loggers(handler)
        shown = warnings.showwarning

        def show(message: Any, category: type[Warning], filename: str, lineno: int, file: TextIO | None = None,
                 line: str | None = None) -> None:
            if _from_compiler(filename):
                out.write(warnings.formatwarning(message, category, filename, lineno, line))
                out.flush()
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        try:
            yield
        finally:
            for logger, handlers in moved.items():
                logger.handlers[:] = handlers
            handler.close()


def _take_torch_loggers(handler: logging.Handler) -> dict[logging.Logger, list[logging.Handler]]:
    """Put ``handler`` in place of the handlers of the ``torch`` loggers that write to the terminal (stderr or
    stdout); their other handlers (torch's trace file) stay. Returns what each logger had, to restore."""
    terminal = {id(sys.stderr), id(sys.stdout), id(sys.__stderr__), id(sys.__stdout__)}
    moved: dict[logging.Logger, list[logging.Handler]] = {}
    names = ["torch"] + [n for n in list(logging.root.manager.loggerDict) if n.startswith("torch.")]
    for name in names:
        logger = logging.getLogger(name)
        kept = [h for h in logger.handlers
                if isinstance(h, logging.FileHandler) or id(getattr(h, "stream", None)) not in terminal]
        if len(kept) < len(logger.handlers):
            moved[logger] = list(logger.handlers)
            logger.handlers[:] = [*kept, handler]
    return moved
