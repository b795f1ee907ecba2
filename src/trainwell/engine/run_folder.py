"""The run folder: where a run's config, metrics, checkpoints and report live. Never silently overwritten."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from trainwell._errors import TrainwellError
from trainwell._files import atomic_write_json


def new_run_dir(out: str | None, name: str) -> Path:
    """``--out DIR`` must be new or empty; without it, ``runs/<name>`` gets a numeric suffix if taken."""
    if out is not None:
        path = Path(out).expanduser()
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise TrainwellError(f"--out {str(path)!r} already exists and is not empty; trainwell never overwrites a run.",
                                 fix=f"choose another --out, delete it yourself, or continue it with --resume {path}")
        _make_writable(path, fix="choose an --out in a folder you can write to")
        return path
    base = Path("runs") / name
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    _make_writable(path, fix="run from a folder you can write to, or give --out DIR")
    return path


def cannot_write(path: Path, error: OSError, fix: str) -> TrainwellError:
    """The one-paragraph error for an output path the operating system refuses, naming the path and why."""
    reason = error.strerror or str(error)
    return TrainwellError(f"Cannot write to {str(path)!r}: {reason}.", fix=fix)


def _make_writable(path: Path, *, fix: str) -> None:
    """Create the folder and prove a file can be written in it, before any training starts."""
    created = not path.exists()
    probe = path / ".trainwell-write-test"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        if created and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        raise cannot_write(path, e, fix) from None


def discard_unfinished(path: Path, existed: bool, *, interrupted: bool = False) -> None:
    """Remove what a run that failed before its first checkpoint wrote, so no empty runs pile up.

    Only folders trainwell created (or an empty ``--out`` it filled) get here; a run with a
    checkpoint is kept so it can be resumed, and so is an interrupted run that has its
    config.yaml (``--resume`` starts it again from step 0).
    """
    if (path / "checkpoints" / "last.pt").exists() or (interrupted and (path / "config.yaml").is_file()):
        return
    if existed:
        for child in path.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


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
    atomic_write_json(path, data)
