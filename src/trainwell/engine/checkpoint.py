"""Checkpoints: plain dicts of tensors, written atomically, loaded with ``weights_only=True``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from trainwell._errors import TrainwellError
from trainwell._files import atomic_write

FORMAT = "trainwell-checkpoint/1"


def atomic_save(obj: dict[str, Any], path: Path) -> None:
    """``torch.save`` through :func:`trainwell._files.atomic_write`: a crash or ``kill -9`` during the
    write leaves the previous file intact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: torch.save(obj, f))


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


def weights_mismatch(expected: Mapping[str, tuple[int, ...]], given: Mapping[str, tuple[int, ...]]) -> str:
    """What keeps ``given`` weights (name -> shape) from loading into a model that ``expected`` describes, in
    words (keys missing, keys not in the model, other shapes; the first 8 of each); "" when they fit."""
    missing = [k for k in expected if k not in given]
    extra = [k for k in given if k not in expected]
    shapes = [f"{k} {tuple(given[k])} (this model: {tuple(expected[k])})" for k in expected
              if k in given and tuple(given[k]) != tuple(expected[k])]
    return "; ".join(f"{label}: {', '.join(keys[:8])}{' ...' if len(keys) > 8 else ''}" for label, keys in
                     (("missing", missing), ("not in this model", extra), ("other shapes", shapes)) if keys)
