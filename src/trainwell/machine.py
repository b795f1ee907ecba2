"""Facts about the machine a run has: the CPU cores it may use, the processes sharing them, the load.

The cores a process may use are the fewest of: the CPUs it is allowed to run on
(``os.sched_getaffinity``) and the container's CPU quota (cgroup v2 ``cpu.max``, or cgroup v1
``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``). ``torchrun`` starts ``LOCAL_WORLD_SIZE`` processes
per machine, and they share those cores: each gets ``cores // processes`` intra-op threads (at
least 1), so four processes on a 2-core box do not each start 2 threads and fight over them.
The data loaders' defaults follow from the same facts.

Every reader takes its inputs as arguments (a folder standing in for ``/sys/fs/cgroup``, an
environment mapping) so tests can fake any machine. Nothing here imports the rest of trainwell,
and torch only inside :func:`apply_threads`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwell._errors import ConfigError

CGROUP_ROOT = Path("/sys/fs/cgroup")
# cgroup v1 mounts the cpu controller under one of these names (relative to CGROUP_ROOT); "" is a
# container whose own cgroup is mounted at the root.
_V1_DIRS = ("cpu", "cpu,cpuacct", "cpuacct,cpu", "")
MAX_WORKERS = 8  # loader worker processes per training process, whatever the core count
PREFETCH_BATCHES = 2  # batches each worker prepares ahead
# Variables torchrun sets in every process it starts.
LAUNCH_VARS = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


# --------------------------------------------------------------------------- cores


def affinity_cores() -> int:
    """The CPUs this process may run on (all of ``os.cpu_count()`` where affinity is unknown, as on macOS)."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        try:
            return max(1, len(getaffinity(0)))
        except OSError:
            pass
    return os.cpu_count() or 1


def cgroup_cpu_limit(root: Path = CGROUP_ROOT) -> float | None:
    """The container's CPU quota in cores (``1.5`` = one and a half), or None when there is none."""
    v2 = _read(root / "cpu.max")
    if v2 is not None:  # "max 100000" (no limit) or "<quota> <period>", both in microseconds
        parts = v2.split()
        return _quota(parts[0], parts[1]) if len(parts) == 2 and parts[0] != "max" else None
    for name in _V1_DIRS:
        folder = root / name if name else root
        quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
        if quota is not None and period is not None:
            return _quota(quota, period)  # a quota of -1 means no limit
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _quota(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def usable_cores(*, affinity: int | None = None, quota: float | None = None, cgroup_root: Path = CGROUP_ROOT) -> int:
    """The cores this process can use: its CPU affinity, capped by the cgroup quota (rounded down, at least 1).

    A quota of 1.5 cores gives 1: a second busy thread would only be throttled by the quota.
    """
    cores = affinity if affinity is not None else affinity_cores()
    limit = quota if quota is not None else cgroup_cpu_limit(cgroup_root)
    if limit is not None:
        cores = min(cores, max(1, math.floor(limit)))
    return max(1, cores)


def local_processes(environ: Mapping[str, str] = os.environ) -> int:
    """Training processes on this machine: ``LOCAL_WORLD_SIZE`` under torchrun, else 1."""
    return _positive_int(environ.get("LOCAL_WORLD_SIZE")) or 1


def _positive_int(text: str | None) -> int | None:
    try:
        value = int(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and value >= 1 else None


@dataclass(frozen=True)
class Machine:
    """The facts the defaults below are chosen from."""

    cores: int  # usable by this process (affinity and quota)
    processes: int = 1  # training processes sharing those cores (LOCAL_WORLD_SIZE)
    omp_threads: int | None = None  # OMP_NUM_THREADS, when set

    @property
    def cores_per_process(self) -> int:
        return max(1, self.cores // self.processes)


def this_machine(environ: Mapping[str, str] = os.environ, cgroup_root: Path = CGROUP_ROOT) -> Machine:
    return Machine(usable_cores(cgroup_root=cgroup_root), local_processes(environ),
                   _positive_int(environ.get("OMP_NUM_THREADS")))


# --------------------------------------------------------------------------- threads


def default_threads(machine: Machine) -> int:
    """Intra-op threads per process: its share of the usable cores, no more than ``OMP_NUM_THREADS`` when set.

    (torchrun sets ``OMP_NUM_THREADS=1`` for several processes per machine unless it is already set.)
    """
    share = machine.cores_per_process
    return min(share, machine.omp_threads) if machine.omp_threads is not None else share


def busy_threads(machine: Machine, load: float | None) -> int | None:
    """The thread count the load leaves free when it is below the default, else None.

    ``load`` is the 1-minute load average: each whole unit of it is a core other programs keep busy (a load below
    1 counts as none), and this process's share of the cores left is its count (at least 1). ``OMP_NUM_THREADS``
    set (by the user, or by torchrun for several processes) is a choice already made: the load changes nothing."""
    if load is None or machine.omp_threads is not None:
        return None
    free = max(1, (machine.cores - math.floor(load)) // machine.processes)
    return free if free < default_threads(machine) else None


def apply_threads(threads: int | None = None, machine: Machine | None = None) -> int:
    """Set torch's intra-op thread count (``torch.set_num_threads``) for this process and return it.

    ``threads`` is the user's choice (``--threads``, ``train.threads``, ``fit(threads=...)``);
    None picks :func:`default_threads` for this machine.
    """
    if threads is not None and threads < 1:
        raise ConfigError(f"threads={threads}: a run needs at least one thread.",
                          fix="use --threads 1 or more, or leave it out for the machine's default")
    import torch

    n = threads if threads is not None else default_threads(machine or this_machine())
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


# --------------------------------------------------------------------------- data loaders


def loader_defaults(machine: Machine, *, in_memory: bool, cuda: bool, workers: int | None = None) -> dict[str, Any]:
    """``num_workers``, ``pin_memory``, ``persistent_workers`` and ``prefetch_factor`` for a DataLoader.

    Tensors already in memory get no worker processes (a worker only adds copying); data read from disk
    (image folders) gets up to one worker per core of this process's share but one, kept alive between
    epochs. ``workers`` (``data.num_workers``) overrides the count. Pinned memory only helps copies to a
    CUDA GPU.
    """
    if workers is None:
        workers = 0 if in_memory else min(MAX_WORKERS, machine.cores_per_process - 1)
    return {"num_workers": workers, "pin_memory": cuda, "persistent_workers": workers > 0,
            "prefetch_factor": PREFETCH_BATCHES if workers > 0 else None}


# --------------------------------------------------------------------------- load and launch


def load_average() -> float | None:
    """The 1-minute load average (None where the OS has none, e.g. Windows)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def launch_facts(environ: Mapping[str, str] = os.environ) -> dict[str, Any] | None:
    """World size, rank and local world size when started by torchrun (all its variables set), else None."""
    if not all(environ.get(k) for k in LAUNCH_VARS):
        return None
    return {"world_size": _positive_int(environ["WORLD_SIZE"]), "rank": _int(environ["RANK"]),
            "local_rank": _int(environ["LOCAL_RANK"]), "local_world_size": _positive_int(environ["LOCAL_WORLD_SIZE"]),
            "master": f"{environ['MASTER_ADDR']}:{environ['MASTER_PORT']}"}


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


# --------------------------------------------------------------------------- memory


def peak_memory(device: Any) -> dict[str, Any]:
    """The run's peak memory: on CUDA the most the caching allocator held for tensors on ``device``; elsewhere
    the process's peak resident set (Python, torch and the data included), which is what a CPU run costs."""
    import torch

    if getattr(device, "type", str(device)) == "cuda":
        return {"peak_memory_mb": round(torch.cuda.max_memory_allocated(device) / 2**20, 1),
                "peak_memory_kind": "cuda tensors (max_memory_allocated)"}
    try:
        import resource
    except ImportError:  # Windows
        return {}
    return {"peak_memory_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "peak_memory_kind": "process peak RSS"}


# --------------------------------------------------------------------------- torchrun's environment


# What joining a group of WORLD_SIZE > 1 processes needs besides WORLD_SIZE (torchrun sets them all).
GROUP_VARS = ("RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
# The whole-number variables and the least value each may take.
_NUMBER_VARS = {"WORLD_SIZE": 1, "LOCAL_WORLD_SIZE": 1, "RANK": 0, "LOCAL_RANK": 0, "MASTER_PORT": 1}
LAUNCH_FIX = ("to train in N processes start the run with `trainwell train --nproc N` (or torchrun), which sets "
               "all of torchrun's variables; for one process, unset WORLD_SIZE (and RANK, LOCAL_RANK, MASTER_ADDR, "
               "MASTER_PORT)")


def launch_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """What makes torchrun's variables in ``environ`` unusable, in one sentence, or None when they are fine
    (none set counts as fine: a single process). Checked before any process group is joined, since a group
    whose other processes never come would wait for them."""
    values: dict[str, int] = {}
    for key, least in _NUMBER_VARS.items():
        text = environ.get(key)
        if not text:
            continue
        try:
            values[key] = int(text)
        except ValueError:
            return f"{key}={text!r} is not a whole number"
        if values[key] < least or (key == "MASTER_PORT" and values[key] > 65535):
            allowed = "from 1 to 65535" if key == "MASTER_PORT" else f"at least {least}"
            return f"{key}={text} is out of range ({allowed})"
    world = values.get("WORLD_SIZE", 1)
    if world <= 1:
        return None
    missing = [k for k in GROUP_VARS if not environ.get(k)]
    if missing:
        return (f"WORLD_SIZE={world} says this process is one of {world}, but {', '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not set, so this is not a torchrun launch and joining "
                "the group would wait for processes that never come")
    if values["RANK"] >= world:
        return f"RANK={values['RANK']} is not below WORLD_SIZE={world} (ranks count from 0)"
    local = values.get("LOCAL_WORLD_SIZE")
    if local is not None and (local > world or values["LOCAL_RANK"] >= local):
        return (f"LOCAL_RANK={values['LOCAL_RANK']} and LOCAL_WORLD_SIZE={local} do not fit WORLD_SIZE={world} "
                "(a local rank counts from 0 below the processes on this machine)")
    return None


def check_launch_env(environ: Mapping[str, str] = os.environ) -> None:
    """Raise a ``ConfigError`` saying what is wrong with torchrun's variables and how to start the run instead."""
    problem = launch_problem(environ)
    if problem is not None:
        raise ConfigError(f"The environment's torchrun variables cannot start a run: {problem}.", fix=LAUNCH_FIX)


def world_size_from_env() -> int:
    """The number of processes torchrun started for this run (1 outside torchrun); torchrun's variables are
    checked first (:func:`check_launch_env`)."""
    check_launch_env()
    return int(os.environ.get("WORLD_SIZE", "1") or 1)


def is_distributed() -> bool:
    """Whether this process is one of several workers of a torchrun group (``WORLD_SIZE`` > 1)."""
    return world_size_from_env() > 1


def under_torchrun() -> bool:
    """Whether torchrun started this process (also as the only worker: ``--nproc 1``)."""
    return "TORCHELASTIC_RUN_ID" in os.environ or is_distributed()


def env_rank() -> int:
    """This worker's global rank from torchrun's environment (0 outside torchrun): known before any set-up."""
    check_launch_env()
    return int(os.environ.get("RANK", "0") or 0)
