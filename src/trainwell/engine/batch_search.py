"""The largest batch that fits in GPU memory: try power-of-two micro-batches, smallest first, until one runs out
of memory or the cap is reached.

``train.batch_size`` is the global batch (docs/SCALE.md): with P processes and ``accumulate`` N, each process
computes micro-batches of batch / (P x N) samples. Memory limits the micro-batch, so that is what is searched;
the global batch is micro x P x N, so it always divides into the processes and micro-batches. ``try_size`` is
any callable that runs one training step on that many samples (tests pass a fake one that raises
``torch.OutOfMemoryError`` above some size).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from trainwell._errors import TrainwellError

MAX_BATCH = 4096  # the largest global batch the search proposes: beyond it the lr, not memory, is the question


@dataclass
class BatchSearch:
    """What the search found: the micro-batch, the global batch it makes, and every size tried."""

    micro: int
    global_batch: int
    processes: int
    accumulate: int
    cap: int  # the largest global batch allowed (the training split's size, at most MAX_BATCH)
    tried: dict[int, str] = field(default_factory=dict)  # micro-batch -> "fits" / "out of memory"
    limited_by: str = "memory"  # memory: the next size ran out of it; cap: the cap stopped the search

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_out_of_memory(error: BaseException) -> bool:
    """torch's OutOfMemoryError, or a RuntimeError saying "out of memory" (older torch, other backends)."""
    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(error, oom)) or (
        isinstance(error, RuntimeError) and "out of memory" in str(error).lower())


def free_memory(device: torch.device) -> None:
    """Release what a failed attempt left: Python's garbage, then the CUDA allocator's cached blocks."""
    gc.collect()
    if device.type == "cuda" and torch.cuda.is_available():
        torch.cuda.empty_cache()


def largest_fitting(try_size: Callable[[int], None], *, cap: int, processes: int = 1, accumulate: int = 1,
                    device: torch.device | None = None) -> BatchSearch:
    """The largest power-of-two micro-batch for which ``try_size(micro)`` runs without running out of memory,
    with ``micro x processes x accumulate`` at most ``cap`` (and MAX_BATCH). Memory is freed after each
    out-of-memory; any other error propagates. Raises a ``TrainwellError`` when not even one sample fits."""
    per_micro = processes * accumulate
    limit = min(cap, MAX_BATCH)
    if limit < per_micro:
        raise TrainwellError(f"A global batch of at most {limit} samples cannot give each of {processes} process(es) "
                             f"{accumulate} micro-batch(es) of at least one sample.",
                             fix="lower --accumulate (or --nproc), or give --batch-size a number")
    device = device or torch.device("cpu")
    result = BatchSearch(0, 0, processes, accumulate, limit)
    micro = 1
    while micro * per_micro <= limit:
        failed = False
        try:
            try_size(micro)
        except BaseException as error:  # noqa: BLE001 - anything but out-of-memory is re-raised
            if not is_out_of_memory(error):
                raise
            failed = True
        if failed:  # outside the except block, so the error's frames (and their tensors) are gone
            free_memory(device)
            result.tried[micro] = "out of memory"
            break
        result.tried[micro] = "fits"
        result.micro = micro
        micro *= 2
    else:
        result.limited_by = "cap"
    if result.micro == 0:
        raise TrainwellError("Even a micro-batch of one sample runs out of GPU memory in a training step.",
                             fix="use a smaller model, --precision bf16-mixed, --set model.checkpoint=true, or "
                                 "another GPU")
    result.global_batch = result.micro * per_micro
    return result
