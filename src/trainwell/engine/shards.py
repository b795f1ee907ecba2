"""Sharded checkpoints: every process writes its own part of the model and optimizer state, no process gathers
the whole (the fsdp strategy's ``last`` checkpoint; ``best.pt`` stays an ordinary, consolidated file).

A sharded checkpoint is a folder, ``checkpoints/last.shards/``:

- one safetensors file per process (``shard-0000<k>-model-00001-of-00001.safetensors``), holding that process's
  pieces of every tensor (``model/<name>`` and ``optim/<parameter name>/<state key>``) with their offsets in the
  whole tensor, written by ``torch.distributed.checkpoint`` in its Hugging Face storage layout;
- ``trainer.pt``, rank 0's, written last: everything else exact resume needs (step, RNG streams, scheduler, the
  optimizer's groups and non-tensor state, the run's config). A folder without it is not a checkpoint.

Atomic as a whole: the folder is written as ``.last.shards.tmp``, completed, then renamed into place (the previous
one set aside and removed after), so a crash or ``kill -9`` leaves the previous checkpoint whole.

Any number of processes loads it, under any strategy: each reads the pieces of each tensor it holds (resharding),
so a run saved by 2 processes resumes on 2 (sharded again) or on 1. Reading is data only: tensors
through safetensors, ``trainer.pt`` with ``weights_only=True``; ``torch.distributed.checkpoint``'s own metadata
file, a pickle, is neither written nor read.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell._errors import TrainwellError

if TYPE_CHECKING:  # torch is imported where used: the run folder's bookkeeping reads this module's names
    import torch
    from torch import nn

SHARDS = "last.shards"
TRAINER = "trainer.pt"


def last_checkpoint(folder: Path) -> Path | None:
    """The checkpoint ``--resume`` continues from in a run's ``checkpoints/`` folder: ``last.pt`` or a complete
    ``last.shards/``, the newer when both are there (a run that changed strategy); None when there is neither."""
    found = [p for p in (folder / "last.pt", folder / SHARDS / TRAINER) if p.is_file()]
    if not found:
        return None
    newest = max(found, key=lambda p: p.stat().st_mtime_ns)
    return newest.parent if newest.name == TRAINER else newest


def save_shards(folder: Path, tensors: dict[str, torch.Tensor], rest: dict[str, Any], *, main: bool,
                barrier: Callable[[], None]) -> None:
    """Write ``tensors`` (this process's pieces) and rank 0's ``rest`` as the sharded checkpoint ``folder``.
    Every process calls it; only ``main`` writes ``rest`` and renames the folder into place."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.hf_storage import HuggingFaceStorageWriter

    from trainwell.engine.checkpoint import atomic_save
    from trainwell.engine.distributed import exchange

    temp, old = _aside(folder, "tmp"), _aside(folder, "old")
    if main:
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir(parents=True)
    barrier()
    with exchange("the sharded checkpoint"), _one_process_is_fine():
        # Returns on every process once all have written: its last exchange collects their write results.
        dcp.save(tensors, storage_writer=HuggingFaceStorageWriter(str(temp), save_distributed=True))
    if main:
        atomic_save(rest, temp / TRAINER)
        if folder.exists():
            shutil.rmtree(old, ignore_errors=True)
            os.rename(folder, old)
        os.rename(temp, folder)
        shutil.rmtree(old, ignore_errors=True)
        _sync_folder(folder.parent)
    barrier()  # every process returns with the checkpoint in place


def remove_leftovers(folder: Path) -> None:
    """The set-aside and half-written folders a killed save left next to ``folder`` (rank 0, before training).
    A run killed between setting the previous checkpoint aside and renaming the new one gets the set-aside one
    back."""
    old = _aside(folder, "old")
    if not folder.exists() and (old / TRAINER).is_file():
        os.rename(old, folder)
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(_aside(folder, "tmp"), ignore_errors=True)


def sharded_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor],
                                                                             dict[str, Any]]:
    """This process's pieces of the model's and optimizer's tensors under flat names, and the optimizer's groups
    and non-tensor state (the same on every process) for ``trainer.pt``."""
    import torch
    from torch.distributed.checkpoint.state_dict import get_model_state_dict, get_optimizer_state_dict

    tensors = {f"model/{k}": v for k, v in get_model_state_dict(model).items()}
    # Before the first step the optimizer has no state: none is saved (asking for it would make some).
    optim = get_optimizer_state_dict(model, optimizer)["state"] if optimizer.state else {}
    plain: dict[str, dict[str, Any]] = {}
    for name, entries in optim.items():
        for key, value in entries.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optim/{name}/{key}"] = value
            else:
                plain.setdefault(name, {})[key] = value
    return tensors, {"optimizer_groups": _groups_by_name(model, optimizer), "optimizer_plain": plain}


def load_shards(folder: Path, model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Load the sharded checkpoint ``folder`` into ``model`` and ``optimizer`` (plain or sharded: each process
    reads what it holds) and return the rest of it (``trainer.pt``) for ``Trainer.load_state_dict``."""
    import torch
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    from trainwell.engine.checkpoint import weights_mismatch
    from trainwell.engine.distributed import exchange

    rest, reader, stored = _open(folder)
    model_state, optim_state = get_state_dict(model, optimizer)  # (the optimizer's state made for its shapes)
    wanted = {f"model/{k}": v for k, v in model_state.items()}
    differ = weights_mismatch({k[len("model/"):]: tuple(v.shape) for k, v in wanted.items()},
                              {k[len("model/"):]: tuple(m.size) for k, m in stored.items() if k.startswith("model/")})
    if differ:
        raise TrainwellError(f"The sharded checkpoint {str(folder)!r} holds another model's weights ({differ}).",
                             fix="resume with the model options the run was started with (its config.yaml)")
    for name, entries in optim_state["state"].items():
        wanted.update({f"optim/{name}/{key}": value for key, value in entries.items()
                       if isinstance(value, torch.Tensor) and f"optim/{name}/{key}" in stored})
    with exchange("the sharded checkpoint"), _one_process_is_fine():
        dcp.load(wanted, storage_reader=reader)
    state: dict[str, dict[str, Any]] = {name: dict(entries) for name, entries in rest["optimizer_plain"].items()}
    for key, value in wanted.items():
        if key.startswith("optim/"):
            name, entry = key[len("optim/"):].rsplit("/", 1)
            state.setdefault(name, {})[entry] = value
    set_state_dict(model, optimizer, model_state_dict={k[len("model/"):]: v for k, v in wanted.items()
                                                       if k.startswith("model/")},
                   optim_state_dict={"state": state, "param_groups": rest["optimizer_groups"]})
    return rest


def read_model(folder: Path) -> dict[str, Any]:
    """The sharded checkpoint ``folder`` as an ordinary checkpoint, in one process: ``trainer.pt``'s entries and
    ``model``, the whole model's state dict put together from every process's pieces (``predict`` and ``export``
    of a run's last checkpoint)."""
    import torch
    import torch.distributed.checkpoint as dcp

    rest, reader, stored = _open(folder)
    model = {key: torch.empty(tuple(meta.size), dtype=meta.properties.dtype) for key, meta in stored.items()
             if key.startswith("model/")}
    with _one_process_is_fine():
        dcp.load(model, storage_reader=reader, no_dist=True)
    return {**rest, "model": {key[len("model/"):]: value for key, value in model.items()}}


def _open(folder: Path) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """A sharded checkpoint's ``trainer.pt``, a reader of its pieces, and what they hold (name -> metadata)."""
    from torch.distributed.checkpoint.hf_storage import HuggingFaceStorageReader

    from trainwell.engine.checkpoint import load_checkpoint

    rest = load_checkpoint(folder / TRAINER)
    reader = HuggingFaceStorageReader(str(folder))
    try:
        stored = reader.read_metadata().state_dict_metadata
    except Exception as e:  # noqa: BLE001 - a damaged safetensors file raises several types
        raise TrainwellError(f"The sharded checkpoint {str(folder)!r} cannot be read ({type(e).__name__}: {e}).",
                             fix="resume from a copy of the run folder, or start the run again") from None
    return rest, reader, stored


def _groups_by_name(model: nn.Module, optimizer: torch.optim.Optimizer) -> list[dict[str, Any]]:
    """The optimizer's groups with their parameters named (the form ``set_state_dict`` reads on any strategy)."""
    names = {id(p): name for name, p in model.named_parameters()}
    return [{**{k: v for k, v in group.items() if k != "params"}, "params": [names[id(p)] for p in group["params"]]}
            for group in optimizer.param_groups]


@contextmanager
def _one_process_is_fine() -> Iterator[None]:
    """Without a process group (a sharded run resumed by one process) torch warns that it assumes one process:
    that is what trainwell asked for."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="torch.distributed is disabled, unavailable or uninitialized")
        yield


def _aside(folder: Path, what: str) -> Path:
    return folder.parent / f".{folder.name}.{what}"


def _sync_folder(folder: Path) -> None:
    """The renames on disk before going on (POSIX: fsync the directory)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
