"""The run folder: where a run's config, metrics, checkpoints and report live. Never silently overwritten."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainwell._errors import TrainwellError
from trainwell._files import WriteFailed, atomic_write_json, remove_leftover_temps, write_failure
from trainwell.engine.run_lock import acquire, refuse_if_held, release
from trainwell.engine.shards import TRAINER, last_checkpoint


def new_run_dir(out: str | None, name: str, *, command: str = "trainwell train") -> Path:
    """``--out DIR`` must be new or empty; without it, ``runs/<name>`` gets a numeric suffix if taken.

    The folder's lock (:mod:`trainwell.engine.run_lock`) is taken as it is created, so of two runs given the same
    ``--out`` at the same time one trains and the other is refused, naming the first."""
    if out is not None:
        path = Path(out).expanduser()
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            if path.is_dir():
                refuse_if_held(path)  # a run training there now is named
            raise TrainwellError(f"--out {str(path)!r} already exists and is not empty; trainwell never overwrites a run.",
                                 fix=f"choose another --out, delete it yourself, or continue it with --resume {path}")
        _make_writable(path, command=command, fix="choose an --out in a folder you can write to")
        return path
    base = Path("runs") / name
    path, n = base, 1
    while True:
        while path.exists():
            n += 1
            path = base.with_name(f"{base.name}-{n}")
        if _make_writable(path, command=command, fix="run from a folder you can write to, or give --out DIR",
                          fresh=True):
            return path


def hold_run_dir(path: Path, *, command: str = "trainwell train", say: Callable[[str], None] | None = None) -> Path:
    """Take the lock of an existing run folder (``--resume``, ``trainwell report``) and remove the temporary files
    that a save killed mid-write left in it and its checkpoints/; what was done is said through ``say``."""
    lock = acquire(path, command=command)
    removed = remove_leftover_temps(path) + remove_leftover_temps(path / "checkpoints") if lock.owner else 0
    notes = list(lock.notes)
    lock.notes.clear()
    if removed:
        notes.append(f"{path}: removed {removed} temporary file{'s' * (removed != 1)} left by a save that was "
                     "killed mid-write")
    for note in notes:
        (say or _stderr)(note)
    return path


def _stderr(text: str) -> None:
    print(f"trainwell: {text}", file=sys.stderr)


def cannot_write(path: Path, error: OSError, fix: str) -> TrainwellError:
    """The one-paragraph error for an output path the operating system refuses, naming the path and why."""
    reason = error.strerror or str(error)
    return TrainwellError(f"Cannot write to {str(path)!r}: {reason}.", fix=fix)


def _make_writable(path: Path, *, command: str, fix: str, fresh: bool = False) -> bool:
    """Create the folder and take its lock (writing the lock file proves a file can be written there), before any
    training starts. With ``fresh``, False when a folder of this name appeared meanwhile (another run's)."""
    existed = path.exists()
    try:
        path.mkdir(parents=True, exist_ok=not fresh)
    except FileExistsError:
        return False
    except OSError as e:
        raise cannot_write(path, e, fix) from None
    try:
        acquire(path, command=command)
    except (TrainwellError, OSError) as e:
        if not existed and path.is_dir() and not any(path.iterdir()):
            path.rmdir()  # the empty folder this call made
        if isinstance(e, TrainwellError):
            raise
        raise cannot_write(path, e, fix) from None
    return True


def discard_unfinished(path: Path, existed: bool, *, interrupted: bool = False, keep_config: bool = False) -> None:
    """Remove what a run that failed before its first checkpoint wrote, so no empty runs pile up.

    Only folders trainwell created (or an empty ``--out`` it filled) get here; a run with a
    checkpoint is kept so it can be resumed, and so is a run with its config.yaml that was interrupted
    or stopped by a write the system refused (``keep_config``): ``--resume`` starts it again from step 0.
    """
    resumable = (interrupted or keep_config) and (path / "config.yaml").is_file()
    if last_checkpoint(path / "checkpoints") is not None or resumable:
        return
    release(path)
    if existed:
        for child in path.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def write_failed_in_run(path: Path, error: BaseException) -> WriteFailed | None:
    """A write the system refused during a run, as one paragraph saying what the run folder keeps and how to
    continue; None for any other error."""
    failed = write_failure(path, error)
    if failed is None:
        return None
    last = last_checkpoint(path / "checkpoints")
    if last is not None:
        step = _checkpoint_step(last / TRAINER if last.is_dir() else last)
        kept = (f"The run folder {str(path)!r} is kept: checkpoints/{last.name}"
                + (f" from step {step}" if step is not None else "") + " is intact.")
    elif (path / "config.yaml").is_file():
        kept = (f"The run folder {str(path)!r} is kept (config.yaml and logs; no checkpoint yet, so it starts "
                "at step 0).")
    else:
        kept = f"The run folder {str(path)!r} held nothing worth keeping yet (no config.yaml), so it is cleared."
    resumable = (path / "config.yaml").is_file()
    then = f"continue with `trainwell train --resume {path}`" if resumable else "start the run again"
    return failed.with_context(kept=kept, then=then)


def _checkpoint_step(path: Path) -> int | None:
    """The step a checkpoint was saved at, its tensors mapped rather than read (a checkpoint may be large)."""
    import torch

    try:
        return int(torch.load(path, map_location="cpu", weights_only=True, mmap=True)["state"]["step"])
    except Exception:  # noqa: BLE001 - a damaged file raises several types; the message just leaves the step out
        return None


def default_name(data: str, model: str, task: str = "classification") -> str:
    """``<data>-<model>-<time>``, with the task after the data when it is not plain classification
    (``mnist-5k-embedding-cnn-<time>``); :func:`new_run_dir` adds a suffix when the name is taken."""
    model = model.rsplit(":", 1)[-1].lower()
    task_part = "" if task == "classification" else f"{task}-"
    return f"{data}-{task_part}{model}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_run_dir(path: Path, *, checkpoint: bool = True) -> Path:
    """A folder that ``--resume`` / ``predict`` can use: it has config.yaml (and, unless
    ``checkpoint=False``, the checkpoints a finished or interrupted run saved)."""
    printed = "give the folder printed at the end of `trainwell train`"
    if path.is_file():
        run = next((p for p in list(path.parents)[:3] if (p / "config.yaml").is_file()), None)
        raise TrainwellError(f"{str(path)!r} is a file; this needs the run folder itself (the folder that holds "
                             "config.yaml and checkpoints/).", fix=f"give {str(run)!r}" if run else printed)
    if not path.is_dir():
        raise TrainwellError(f"Run folder {str(path)!r} does not exist.", fix=printed)
    if not (path / "config.yaml").is_file():
        raise TrainwellError(f"{str(path)!r} is not a trainwell run folder (no config.yaml).", fix=printed)
    if checkpoint and not (path / "checkpoints").is_dir():
        raise TrainwellError(f"{str(path)!r} has no checkpoints yet: the run stopped before its first save.",
                             fix=f"finish it with `trainwell train --resume {path}`")
    return path


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON, atomically."""
    atomic_write_json(path, data)
