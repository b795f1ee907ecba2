"""Checkpoints: plain dicts of tensors, written atomically, loaded with ``weights_only=True``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch

from trainwell._errors import TrainwellError

FORMAT = "trainwell-checkpoint/1"


def atomic_save(obj: dict[str, Any], path: Path) -> None:
    """Write to a temporary file in the same folder, flush it to disk, then rename over ``path``.

    A crash or ``kill -9`` during the write leaves the previous file intact.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Load a trainwell checkpoint safely (no arbitrary pickled code), every tensor on the CPU.

    Always the CPU, whatever device the run uses: the RNG states must be CPU tensors for
    ``torch.set_rng_state``, and ``load_state_dict`` copies weights and optimizer state onto the
    device of the parameters they belong to. A checkpoint saved on a GPU loads on a machine without one.
    """
    if not path.is_file():
        raise TrainwellError(f"No checkpoint at {str(path)!r}.",
                             fix="point at a run folder made by `trainwell train` (it has checkpoints/last.pt)")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - truncated files raise several types
        raise TrainwellError(f"Checkpoint {str(path)!r} cannot be read ({type(e).__name__}: {e}).") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise TrainwellError(f"{str(path)!r} is not a trainwell checkpoint.")
    return ckpt
