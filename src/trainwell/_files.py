"""The one way trainwell writes a file of the run folder: whole or not at all.

Every file goes to a temporary name in the same folder, is flushed to disk, then renamed over the
target, so a crash, ``kill -9`` or a full disk leaves the previous version intact, never half a file.
(Append-only logs such as ``steps.csv`` are the exception: their readers skip a cut-short last line.)
A write the system refuses (full disk, file-size limit, quota, read-only disk) raises :class:`WriteFailed`,
one clear paragraph naming the file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from trainwell._errors import TrainwellError

# The errors that mean "the system will not take more bytes here", not a bug: reported as WriteFailed.
WRITE_ERRNOS = frozenset(n for n in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", None), errno.EROFS)
                         if n is not None)
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$")


class WriteFailed(TrainwellError):
    """The system refused to write a file (full disk, ``ulimit -f``, quota, read-only disk); the file's previous
    version, if any, is intact. ``kept`` and ``then`` add what the run folder still holds and how to go on."""

    def __init__(self, path: Path | str, error: OSError, *, kept: str = "", then: str = "") -> None:
        self.path, self.error, self.kept, self.then = Path(path), error, kept, then
        code = errno.errorcode.get(error.errno or 0, "")
        reason = f"{error.strerror or error} ({code})" if code else f"{error.strerror or error}"
        message = f"Could not write {str(path)!r}: {reason}."
        if kept:
            message += f" {kept}"
        super().__init__(message, fix=_fix(error.errno, path) + (f", then {then}" if then else ""))

    def with_context(self, *, kept: str, then: str) -> WriteFailed:
        """The same failure, saying what was kept and what to run once the cause is fixed."""
        return WriteFailed(self.path, self.error, kept=kept, then=then)


def _fix(code: int | None, path: Path | str) -> str:
    if code == errno.EFBIG:
        return "raise the file-size limit of this shell (`ulimit -f unlimited`) or of the job"
    if code == errno.EROFS:
        return f"write to a disk that is not read-only (the folder of {str(path)!r} is mounted read-only)"
    if code == getattr(errno, "EDQUOT", -1):
        return "free space within your disk quota (or ask for a larger one)"
    return f"free space on the disk of {str(path)!r} (`df -h {Path(path).parent}` shows it)"


def write_failure(path: Path | str, error: BaseException) -> WriteFailed | None:
    """A :class:`WriteFailed` for ``error`` when it is the system refusing bytes, else None."""
    if isinstance(error, WriteFailed):
        return error
    if isinstance(error, OSError) and error.errno in WRITE_ERRNOS:
        return WriteFailed(error.filename or path or "a file", error)
    return None


class _Recording:
    """A file wrapper that remembers the first OSError a write raised, so a library that turns it into its own
    error (torch's zip writer: "unexpected pos") is still reported as what it was."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self.error: OSError | None = None

    def write(self, data: Any) -> int:
        try:
            return self._f.write(data)
        except OSError as e:
            self.error = self.error or e
            raise

    def flush(self) -> None:
        self._f.flush()


def atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write`` with a binary file open on a temporary name, then rename it to ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    recording: _Recording | None = None
    try:
        # os.open with 0o666 lets the umask decide the permissions (mkstemp would force 0600).
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as f:
            recording = _Recording(f)
            write(recording)  # type: ignore[arg-type]
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        cause = recording.error if recording is not None and recording.error is not None else e
        failed = write_failure(path, cause)
        if failed is not None and not isinstance(e, KeyboardInterrupt):
            raise WriteFailed(path, failed.error) from e
        raise


def append_text(path: Path, text: str) -> None:
    """Append UTF-8 text to a log file (``steps.csv``); a refused write is a :class:`WriteFailed`."""
    try:
        with Path(path).open("a", newline="", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        failed = write_failure(path, e)
        if failed is None:
            raise
        raise WriteFailed(path, e) from e


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 text (newlines as given) atomically."""
    data = text.encode("utf-8")
    atomic_write(path, lambda f: f.write(data))


def atomic_write_json(path: Path, data: Any) -> None:
    """Write indented UTF-8 JSON atomically; values JSON does not know (paths, numpy numbers) as strings."""
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (one we may not signal counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def remove_leftover_temps(folder: Path) -> int:
    """Delete the temporary files :func:`atomic_write` left in ``folder`` when its process was killed mid-write
    (``.NAME.<pid>.<hex>.tmp``), only those whose process is gone; returns how many were removed."""
    removed = 0
    if not Path(folder).is_dir():
        return 0
    for entry in Path(folder).iterdir():
        match = _TEMP.match(entry.name)
        if match is None or not entry.is_file():
            continue
        pid = int(match["pid"])
        if pid == os.getpid() or pid_alive(pid):
            continue
        try:
            entry.unlink()
            removed += 1
        except FileNotFoundError:
            pass
    return removed
