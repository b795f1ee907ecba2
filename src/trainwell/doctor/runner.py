"""``trainwell doctor run SCRIPT ARGS``: run an unchanged script as ``python SCRIPT ARGS`` would, watched.

The script runs as ``__main__`` in this interpreter with its own ``sys.argv``; its output,
behaviour and exit code are preserved (an uncaught exception prints its traceback and
exits 1, as Python does). The doctor's findings go to stderr.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from pathlib import Path
from typing import Any

from trainwell.doctor.session import Session


def run_script(script: Path, args: list[str], session: Session) -> int:
    """Run ``script`` with ``args`` under ``session``; return the exit code it would have had."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(script), *args]
    sys.path.insert(0, str(script.resolve().parent))  # as `python script.py` does
    code = 0
    try:
        with session:
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as e:
                code = _exit_code(e.code)
            except KeyboardInterrupt:
                traceback.print_exc()
                code = 130
            except BaseException as e:  # noqa: BLE001 - the script's own error: report it as Python would
                session.error(e)
                traceback.print_exception(e)
                code = 1
            session.end()
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        sys.stdout.flush()
    return code


def _exit_code(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints the message and exits 1
    return 1


def script_path(text: str) -> Path:
    from trainwell._errors import TrainwellError

    path = Path(text)
    if not path.is_file():
        raise TrainwellError(f"No script {text!r} to run.", fix="give the path of your training script: "
                                                                 "trainwell doctor run train.py")
    return Path(os.path.normpath(path))
