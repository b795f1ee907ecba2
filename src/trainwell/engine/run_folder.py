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
        path.mkdir(parents=True, exist_ok=True)
        return path
    base = Path("runs") / name
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    path.mkdir(parents=True)
    return path


def discard_unfinished(path: Path, existed: bool) -> None:
    """Remove what a run that failed before its first checkpoint wrote, so no empty runs pile up.

    Only folders trainwell created (or an empty ``--out`` it filled) get here; a run with a
    checkpoint is kept so it can be resumed.
    """
    if (path / "checkpoints" / "last.pt").exists():
        return
    if existed:
        for child in path.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def default_name(data: str, model: str) -> str:
    model = model.rsplit(":", 1)[-1].lower()
    return f"{data}-{model}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_run_dir(path: Path) -> Path:
    """A folder that ``--resume`` / ``predict`` can use: it has config.yaml and a checkpoint."""
    if not path.is_dir():
        raise TrainwellError(f"Run folder {str(path)!r} does not exist.", fix="give the folder printed at the end of `trainwell train`")
    if not (path / "config.yaml").is_file() or not (path / "checkpoints").is_dir():
        raise TrainwellError(f"{str(path)!r} is not a trainwell run folder (no config.yaml and checkpoints/).",
                             fix="give the folder printed at the end of `trainwell train`")
    return path


def write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write_json(path, data)
