"""``trainwell doctor run SCRIPT ARGS``: run an unchanged script as ``python SCRIPT ARGS`` would, watched.

The script's world is the one ``python SCRIPT ARGS`` gives it: a fresh ``__main__`` module with the
same globals (``__file__`` absolute, ``__builtins__`` the module, ``__package__`` and ``__spec__``
None, a source loader), ``sys.argv`` as typed, ``sys.path[0]`` its folder. An uncaught exception
is printed by ``sys.excepthook`` as Python prints it (with its "Did you mean" hints), with the
runner's and the doctor's own frames left out, and exits 1; so is a script that does not compile (a
``SyntaxError`` with the script's file, line and caret, nothing of trainwell's); ``sys.exit`` gives its
own code; Ctrl-C exits 130. A warning a library raises for its caller names the script's line, as without
the doctor's wrappers (``warnsite.py``). The doctor's findings go to stderr, each in a delimited block.

Only the process that started the script reports. The children the script starts through ``multiprocessing``
(fork or spawn) or ``torch.multiprocessing.spawn`` are watched under sessions of their own, and what they saw is
merged into the script's report when the script ends (``children.py``). A child of a bare ``os.fork()`` shows no
finding, and one that runs on to the script's end exits there with the script's code, as under ``python``,
without the doctor's end-of-run report.
"""

from __future__ import annotations

import builtins
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainwell.doctor.children import Children, watch_children
from trainwell.doctor.session import Session

_OWN = str(Path(__file__).resolve().parents[1])  # trainwell's own frames: never shown as the script's


def run_script(script: str, args: list[str], session: Session) -> int:
    """Run ``script`` (its path as typed) with ``args`` under ``session``; return the exit code it would have had."""
    main = _main_module(script)
    try:
        code = compile(_source(script), main.__file__, "exec", dont_inherit=True)
    except SyntaxError as e:  # what `python script.py` prints for it, and its exit code
        _print_as_python(e)
        return 1
    starter = os.getpid()
    session.on_finding = _only_in(starter, session.on_finding)
    session.on_internal_error = _only_in(starter, session.on_internal_error)
    saved_argv, saved_path, saved_main = sys.argv[:], sys.path[:], sys.modules.get("__main__")
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.realpath(script)))  # as `python script.py` does
    sys.modules["__main__"] = main
    exit_code = 0
    children: Children | None = None
    try:
        with session:
            children = watch_children(session)
            try:
                exec(code, main.__dict__)
            except SystemExit as e:
                exit_code = _exit_code(e.code)
            except KeyboardInterrupt as e:
                _print_as_python(e)
                exit_code = 130  # what a shell reports for a Python killed by Ctrl-C
            except BaseException as e:  # noqa: BLE001 - the script's own error: reported as Python would
                if os.getpid() == starter:
                    session.error(e)
                _print_as_python(e)
                exit_code = 1
            if os.getpid() != starter:  # a forked child at the script's end: it ends as under python, unreported
                _flush()
                raise SystemExit(exit_code)
            session.end()
            try:
                children.collect(session)
            except Exception as e:  # noqa: BLE001 - a child's record never breaks the script's own report
                session.internal_error(None, "merging the child processes' reports", e)
    finally:
        if children is not None and os.getpid() == starter:
            children.close()
        sys.argv, sys.path[:] = saved_argv, saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        _flush()
    return exit_code


def _source(script: str) -> bytes:
    from trainwell._errors import TrainwellError

    try:
        return Path(script).read_bytes()
    except OSError as e:
        raise TrainwellError(f"Cannot read the script {script!r}: {e.strerror or e}.",
                             fix="check the path and that you may read the file") from None


def _only_in(pid: int, callback: Callable[..., None] | None) -> Callable[..., None] | None:
    """``callback``, called only in the process ``pid`` (the one that started the script), not in its forks."""
    if callback is None:
        return None

    def guarded(*args: Any) -> None:
        if os.getpid() == pid:
            callback(*args)

    return guarded


def _main_module(script: str) -> types.ModuleType:
    """A ``__main__`` module with the globals ``python script.py`` gives it."""
    from importlib.machinery import SourceFileLoader

    path = os.path.abspath(script)
    main = types.ModuleType("__main__")
    main.__dict__.update({"__file__": path, "__cached__": None, "__builtins__": builtins, "__annotations__": {},
                          "__loader__": SourceFileLoader("__main__", path)})
    return main


def _print_as_python(error: BaseException) -> None:
    _without_own_frames(error, set())
    _flush()
    sys.excepthook(type(error), error, error.__traceback__)


def _without_own_frames(error: BaseException, seen: set[int]) -> None:
    """Drop trainwell's frames from ``error``'s traceback and from those of its cause and context."""
    if id(error) in seen:
        return
    seen.add(id(error))
    kept = []
    tb = error.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_OWN):
            kept.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    error.__traceback__ = rebuilt
    for linked in (error.__cause__, error.__context__):
        if linked is not None:
            _without_own_frames(linked, seen)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # a closed or replaced stream: nothing to flush
            pass


def _exit_code(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    _flush()
    print(code, file=sys.stderr)  # sys.exit("message") prints the message and exits 1
    return 1


def script_path(text: str) -> str:
    """The script's path as typed (it becomes ``sys.argv[0]``), once it is known to be a file."""
    from trainwell._errors import TrainwellError

    if not Path(text).is_file():
        raise TrainwellError(f"No script {text!r} to run.", fix="give the path of your training script: "
                                                                 "trainwell doctor run train.py")
    return text
