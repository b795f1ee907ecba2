"""The process group of a run under torchrun: set up from its environment, torn down at the end, and the few
collectives the run wiring needs outside the training loop (one object from rank 0, a barrier, gathered lists).

torchrun (``torch.distributed.run``) starts each worker with ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE`` and ``MASTER_ADDR`` / ``MASTER_PORT`` in its environment; ``WORLD_SIZE`` > 1 is what makes a
run distributed. Every helper here is a no-op (or the identity) in a single process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import torch

from trainwell._spread import EXCHANGE_TIMEOUT_S, SHARD_MIN_SHARE, STRATEGIES
from trainwell.machine import env_rank, is_distributed, under_torchrun, world_size_from_env  # noqa: F401

if TYPE_CHECKING:
    from trainwell.engine.strategy import Strategy

T = TypeVar("T")


def restarted() -> bool:
    """Whether torchrun's elastic agent restarted this worker group after a failure."""
    return int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") or 0) > 0


def device_for(requested: torch.device) -> torch.device:
    """One CUDA device per local worker (``cuda:LOCAL_RANK``); any other device is used as it is."""
    if requested.type == "cuda" and is_distributed():
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if local >= torch.cuda.device_count():
            from trainwell._errors import TrainwellError

            raise TrainwellError(f"Worker {local} on this machine needs its own GPU, but {torch.cuda.device_count()} "
                                 "are visible.", fix=f"start at most {torch.cuda.device_count()} processes per machine "
                                                     "(--nproc / --nproc-per-node), or train on the CPU (--device cpu)")
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
        return device
    return requested


_timeout_s = EXCHANGE_TIMEOUT_S  # the process group's, once joined here
joined_here = False  # this process joined a process group through ``init`` (a worker of trainwell's)


def init(device: torch.device, timeout: float = EXCHANGE_TIMEOUT_S) -> None:
    """Join the process group (``nccl`` on CUDA, ``gloo`` otherwise) unless it is joined already; ``timeout``:
    the seconds any exchange may wait for the other processes (``train.timeout``)."""
    import datetime

    import torch.distributed as dist

    global _timeout_s, joined_here
    if not is_distributed() or dist.is_initialized():
        return
    _timeout_s, joined_here = timeout, True
    dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo",
                            device_id=device if device.type == "cuda" else None,
                            timeout=datetime.timedelta(seconds=timeout))


class ExchangeError(RuntimeError):
    """An exchange between processes that did not complete: which rank, which exchange, and the likely cause."""


# What the backends say when a partner is missing: it went away (gloo's "Connection closed by peer"), or it did
# not come in time (gloo's "Timed out waiting 5000ms for recv operation", NCCL's watchdog timeouts).
_PEER_GONE = re.compile(r"connection (closed|reset) by peer|broken pipe", re.IGNORECASE)
_TIMED_OUT = re.compile(r"timed out|timeout", re.IGNORECASE)


@contextmanager
def exchange(what: str) -> Iterator[None]:
    """Around a collective: a failure because another process stopped or did not come in time is raised again as
    an ``ExchangeError`` naming this rank, the exchange and ``train.timeout``."""
    try:
        yield
    except RuntimeError as e:
        text = str(e)
        gone = _PEER_GONE.search(text)
        if isinstance(e, ExchangeError) or not (gone or _TIMED_OUT.search(text)):
            raise
        backend = text.strip()[:300]
        if gone:
            raise ExchangeError(f"rank {env_rank()}: the exchange of {what} failed: another process stopped (its own "
                                f"error says why). Backend: {backend}") from e
        raise ExchangeError(
            f"rank {env_rank()}: the exchange of {what} with the other processes did not complete within "
            f"{_timeout_s:g} s: another process stopped (then its own error says why), or it is still busy with "
            f"something that takes longer (then raise train.timeout / --timeout). Backend: {backend}") from e


def close() -> None:
    """Leave the process group (each worker, at the end of its run)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def leave(code: int) -> NoReturn:
    """End a worker process with ``code`` once its work and Python's own clean-up are done: the atexit handlers
    run and the streams are flushed, then the process ends without the interpreter's teardown. There, gloo's C++
    threads, which outlive ``destroy_process_group`` while the C++ side (DDP's reducer) still holds the group,
    can abort the process ("terminate called without an active exception", SIGABRT) after a run that succeeded,
    turning its exit code into -6 (pytorch/pytorch#179291 describes the teardown)."""
    import atexit
    import sys

    close()
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def active() -> bool:
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def broadcast(value: Any) -> Any:
    """Rank 0's ``value`` on every rank (a picklable object: a run folder's path, an error to raise)."""
    if not active():
        return value
    import torch.distributed as dist

    box = [value]
    with exchange("rank 0's result"):
        dist.broadcast_object_list(box, src=0)
    return box[0]


def on_rank0(make: Callable[[], T]) -> T:
    """``make()`` run by rank 0 alone (creating the run folder), its result handed to every rank. When it raises,
    rank 0 raises its error and the others a ``TrainwellError`` saying so, instead of waiting for rank 0 forever."""
    if not active():
        return make()
    if env_rank() != 0:
        outcome = broadcast(None)
        if outcome[0] == "failed":
            from trainwell._errors import TrainwellError

            raise TrainwellError(f"rank 0 failed: {outcome[1]}")
        return outcome[1]  # type: ignore[no-any-return]
    try:
        value = make()
    except BaseException as e:
        broadcast(("failed", f"{type(e).__name__}: {e}"))
        raise
    broadcast(("done", value))
    return value


def barrier() -> None:
    """Wait until every rank gets here (e.g. until rank 0 has written a checkpoint the others read)."""
    if active():
        import torch.distributed as dist

        with exchange("a barrier (waiting for every rank)"):
            dist.barrier()


def gather(value: Any, what: str = "gathered values") -> list[Any]:
    """Every rank's ``value``, in rank order, on every rank (``[value]`` in one process); ``what``: the exchange's
    name in an error."""
    if not active():
        return [value]
    import torch.distributed as dist

    out: list[Any] = [None] * dist.get_world_size()
    with exchange(what):
        dist.all_gather_object(out, value)
    return out


def facts() -> dict[str, Any]:
    """``world_size``, ``nodes`` (``WORLD_SIZE // LOCAL_WORLD_SIZE``) and the ``backend`` of this run."""
    world = world_size_from_env()
    local = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)) or world)
    backend = None
    if active():
        import torch.distributed as dist

        backend = str(dist.get_backend())
    return {"world_size": world, "nodes": max(world // max(local, 1), 1), "backend": backend}


def strategy_for(device: torch.device, *, name: str = "auto", sync_bn: bool = False,
                 timeout: float = EXCHANGE_TIMEOUT_S, shard_min_share: float = SHARD_MIN_SHARE) -> Strategy:
    """The strategy ``name`` asks for (``train.strategy``): ``auto`` is DDP when torchrun started several workers
    (``WORLD_SIZE`` > 1) and one process otherwise; ``ddp`` and ``fsdp`` need several (the process group is joined
    here if it is not yet)."""
    from trainwell._errors import ConfigError
    from trainwell.engine.strategy import DDP, SingleDevice

    if name not in STRATEGIES:
        raise ConfigError(f"train.strategy={name!r} is not a strategy.", fix="use one of " + ", ".join(STRATEGIES))
    if not is_distributed():
        if name != "auto":  # (said, not silent: e.g. a run of 2 processes resumed by 1)
            import sys

            print(f"trainwell: train.strategy={name} with one process: nothing to spread over processes, it trains "
                  "as one process (the same optimization; checkpoints are the same ordinary files)", file=sys.stderr)
        return SingleDevice()
    if sync_bn and device.type != "cuda":
        raise ConfigError(f"model.sync_bn=true needs CUDA devices (SyncBatchNorm has no {device.type} version).",
                          fix="set model.sync_bn=false (on CPU each process normalizes its own micro-batch)")
    init(device, timeout)
    if name == "fsdp":
        if sync_bn:
            raise ConfigError("model.sync_bn=true goes with DDP; the fsdp strategy does not convert BatchNorm.",
                              fix="use --strategy ddp, or set model.sync_bn=false")
        from trainwell.engine.fsdp import FSDP

        return FSDP(device, min_share=shard_min_share)
    return DDP(device, sync_bn=sync_bn)
