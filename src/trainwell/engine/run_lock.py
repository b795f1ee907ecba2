"""One writer per run folder: ``RUN/.lock``, created atomically, naming its holder (process id, host, start).

A lock whose holder is gone (same host, process not alive or a different process under a reused id) is stale and
taken over; a holder on another host cannot be checked, so it is refused with the way out. The processes of one
torchrun group write one folder together: the launcher (or rank 0) holds the lock and hands its token to the
others through ``TRAINWELL_RUN_LOCK``. Every lock this process holds is released when it exits normally, on an
error or on Ctrl-C; a ``kill -9`` leaves a stale lock that the next run takes over.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainwell._errors import TrainwellError
from trainwell._files import pid_alive, write_failure

LOCK_NAME = ".lock"
TOKEN_ENV = "TRAINWELL_RUN_LOCK"
_HELD: dict[Path, RunLock] = {}


@dataclass
class RunLock:
    """A held lock on ``folder``; ``owner`` False for a member of the holder's torchrun group."""

    folder: Path
    token: str
    owner: bool = True
    notes: list[str] = field(default_factory=list)

    def release(self) -> None:
        """Remove the lock file if it is still this lock's (a folder deleted meanwhile is fine)."""
        _HELD.pop(_key(self.folder), None)
        if not self.owner:
            return
        holder = _read(self.folder / LOCK_NAME)
        if holder is not None and holder.get("token") == self.token:
            (self.folder / LOCK_NAME).unlink(missing_ok=True)


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc``), to tell a reused process id."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def holder_text(holder: dict[str, Any]) -> str:
    """``trainwell train (pid 1234 on host h, since 2026-01-02 10:00:00)``."""
    return (f"{holder.get('command') or 'trainwell'} (pid {holder.get('pid')} on host {holder.get('host')}, "
            f"since {holder.get('started')})")


def acquire(folder: Path, *, command: str = "trainwell") -> RunLock:
    """Take ``folder``'s lock for this process, taking over a stale one (said in ``notes``); a live holder
    elsewhere is a :class:`TrainwellError` naming it."""
    folder = Path(folder)
    path = folder / LOCK_NAME
    held = _HELD.get(_key(folder))
    if held is not None:
        return held
    token = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(8).hex()}"
    notes: list[str] = []
    for _ in range(50):
        if _create(path, token, command):
            lock = RunLock(folder, token, notes=notes)
            _HELD[_key(folder)] = lock
            return lock
        holder = _read(path)
        if holder is None:  # being written this instant, or gone: look again
            if path.exists() and time.time() - _mtime(path) > 5:
                holder = {}  # unreadable for seconds: not a lock any live trainwell is writing
            else:
                time.sleep(0.02)
                continue
        group = os.environ.get(TOKEN_ENV)
        if group and holder.get("token") == group:
            lock = RunLock(folder, group, owner=False)
            _HELD[_key(folder)] = lock
            return lock
        if not _stale(holder):
            raise _in_use(folder, holder)
        if _remove_if_same(path, holder):
            notes.append(f"{folder}: took over the lock of a run that is gone"
                         + (f" ({holder_text(holder)})" if holder else " (its lock file was unreadable)") + ".")
    raise TrainwellError(f"Could not take the lock of {str(folder)!r}: other processes keep taking it.",
                         fix="make sure only one trainwell run writes this folder, then try again")


def refuse_if_held(folder: Path) -> None:
    """A :class:`TrainwellError` naming ``folder``'s live holder, if it has one (a stale lock is no holder)."""
    holder = _read(Path(folder) / LOCK_NAME)
    if holder and holder.get("token") != os.environ.get(TOKEN_ENV) and not _stale(holder):
        raise _in_use(Path(folder), holder)


def held(folder: Path) -> RunLock | None:
    """The lock this process holds on ``folder`` (as its owner or as a member of its group), if any."""
    return _HELD.get(_key(Path(folder)))


def release(folder: Path) -> None:
    """Release this process's lock on ``folder`` if it holds one."""
    lock = _HELD.get(_key(Path(folder)))
    if lock is not None:
        lock.release()


def release_all() -> None:
    """Release every lock this process holds."""
    for lock in list(_HELD.values()):
        lock.release()


atexit.register(release_all)


def _key(folder: Path) -> Path:
    return Path(os.path.abspath(folder))


def _create(path: Path, token: str, command: str) -> bool:
    """Create the lock file with O_EXCL (atomic: one creator wins); False if it exists."""
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "process_start": process_start(os.getpid()), "command": command,
              "argv": " ".join(sys.argv)[:500], "token": token}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    except OSError as e:
        raise write_failure(path, e) or e from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(holder) + "\n")
    except OSError as e:
        path.unlink(missing_ok=True)
        raise write_failure(path, e) or e from None
    return True


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return time.time()


def _stale(holder: dict[str, Any]) -> bool:
    """A holder on this host whose process is gone, or whose id now belongs to another process."""
    if not holder:
        return True
    if holder.get("host") != socket.gethostname():
        return False
    pid = int(holder.get("pid") or 0)
    if pid == os.getpid():  # our own id, but not a lock we hold: left by an earlier process with the same id
        return all(lock.token != holder.get("token") for lock in _HELD.values())
    if not pid_alive(pid):
        return True
    started, now = holder.get("process_start"), process_start(pid)
    return started is not None and now is not None and started != now


def _remove_if_same(path: Path, holder: dict[str, Any]) -> bool:
    """Delete the stale lock if it still is the one judged stale; the check and the removal happen under an
    exclusive ``flock`` of the folder, so of two processes taking over the same lock only one removes it."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): remove it; the O_EXCL creation that follows still has one winner
        path.unlink(missing_ok=True)
        return True
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if (_read(path) or {}) != holder:
            return False
        path.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)  # closing releases the flock


def _in_use(folder: Path, holder: dict[str, Any]) -> TrainwellError:
    here = holder.get("host") == socket.gethostname()
    fix = (f"wait for it to finish, or stop it (kill {holder.get('pid')}); a run that was killed leaves a lock "
           "that the next run takes over by itself" if here else
           f"wait for it to finish; if you are sure the run on {holder.get('host')} is gone, delete "
           f"{str(folder / LOCK_NAME)!r} and try again")
    return TrainwellError(f"{str(folder)!r} is in use by {holder_text(holder)}; a run folder has one writer.",
                          fix=fix)
