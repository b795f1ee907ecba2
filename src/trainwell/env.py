"""Environment report: what is installed, what hardware torch can see, and what to fix.

``collect_env`` probes the machine (every probe is guarded, so a broken install still
gets a report); ``check_env`` is a pure function of that dict so it can be tested with
fake environments; ``verdict`` sums it up in one line.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]

MIN_PYTHON = (3, 11)
# torchvision releases track torch releases: torch 2.N pairs with torchvision 0.(N+15).
TORCHVISION_MINOR_OFFSET = 15
VENV_FIX = "python -m venv .venv && . .venv/bin/activate && pip install -e ."
CUDA_WHEEL_FIX = (
    "install the CUDA build of torch: pick your OS, pip and CUDA version at "
    "https://pytorch.org/get-started/locally/ and run the command it shows"
)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the environment, in plain words, with how to fix it."""

    what: str
    fix: str
    severity: Severity = "error"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


# --------------------------------------------------------------------------- collect


def collect_env() -> dict[str, Any]:
    """Gather facts about Python, the OS, torch and the accelerators (JSON-serialisable)."""
    info: dict[str, Any] = {
        "python_version": platform.python_version(),
        "python_executable": sys.executable,
        "os": platform.system(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "ram_gib": _total_ram_gib(),
        "in_venv": _in_venv(),
        "env_prefix": os.environ.get("CONDA_PREFIX") or sys.prefix,
        # Read from package metadata: importing a mismatched torchvision can itself crash.
        "torchvision_version": _dist_version("torchvision"),
        "nvidia_driver": _nvidia_driver_version(),
        **_machine_info(),
    }
    info.update(_torch_info())
    return info


def _machine_info() -> dict[str, Any]:
    """Usable cores, the thread count a run would take, the load, and torchrun's launch facts."""
    from trainwell.machine import default_threads, launch_facts, launch_problem, load_average, this_machine

    machine = this_machine()
    return {"usable_cores": machine.cores, "local_processes": machine.processes,
            "default_threads": default_threads(machine), "load_average_1m": load_average(), "launch": launch_facts(),
            "launch_problem": launch_problem()}


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _in_venv() -> bool:
    return sys.prefix != sys.base_prefix or bool(os.environ.get("CONDA_PREFIX"))


def _total_ram_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) * 1024 / 2**30, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:  # macOS and other Unixes without /proc
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (AttributeError, ValueError, OSError):
        return None


def _nvidia_driver_version() -> str | None:
    """The NVIDIA driver version, or None when there is no NVIDIA driver."""
    exe = shutil.which("nvidia-smi")
    if exe:
        try:
            out = subprocess.run(
                [exe, "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=5, check=False,
            )
            lines = out.stdout.strip().splitlines()
            if out.returncode == 0 and lines:
                return lines[0].strip()
        except (OSError, subprocess.SubprocessError):
            pass
    # Containers often expose the driver without shipping nvidia-smi.
    try:
        with open("/proc/driver/nvidia/version", encoding="ascii", errors="replace") as f:
            m = re.search(r"Kernel Module\s+(\d+(?:\.\d+)+)", f.read())
            return m.group(1) if m else None
    except OSError:
        return None


def _torch_info() -> dict[str, Any]:
    empty: dict[str, Any] = {
        "torch_version": None, "torch_error": None, "torch_build": None,
        "cuda_runtime": None, "hip_version": None, "cuda_available": False,
        "devices": [], "cudnn_version": None, "mps_available": False,
        "amp_device": None, "bf16": False, "fp16": False, "torch_threads": None,
        "distributed_backends": [], "nccl_version": None,
    }
    try:
        import torch
    except Exception as e:  # a broken install is exactly what this report is for
        return {**empty, "torch_error": f"{type(e).__name__}: {e}"}

    cuda_runtime = torch.version.cuda
    hip = getattr(torch.version, "hip", None)
    if hip:
        build = f"ROCm {hip}"
    elif cuda_runtime:
        build = f"CUDA {cuda_runtime}"
    else:
        build = "CPU"

    # A CUDA wheel on a machine without a driver warns here; check_env reports it properly.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cuda_ok = _safe(torch.cuda.is_available, False)
        devices = _cuda_devices(torch) if cuda_ok else []
        cudnn = _safe(torch.backends.cudnn.version, None) if cuda_ok or cuda_runtime else None
        mps = _safe(lambda: torch.backends.mps.is_available(), False)
        if cuda_ok:
            amp_device = "cuda"
            bf16 = bool(_safe(torch.cuda.is_bf16_supported, False))
            fp16 = True  # every GPU recent torch supports does fp16
        else:
            amp_device = "cpu"
            bf16 = _cpu_autocast_works(torch, torch.bfloat16)
            fp16 = _cpu_autocast_works(torch, torch.float16)

    return {
        **empty,
        "torch_version": torch.__version__,
        "torch_build": build,
        "cuda_runtime": cuda_runtime,
        "hip_version": hip,
        "cuda_available": bool(cuda_ok),
        "devices": devices,
        "cudnn_version": _format_cudnn(cudnn),
        "mps_available": bool(mps),
        "amp_device": amp_device,
        "bf16": bf16,
        "fp16": fp16,
        "torch_threads": torch.get_num_threads(),
        **_distributed_info(torch, bool(cuda_ok)),
    }


def _distributed_info(torch: Any, cuda_ok: bool) -> dict[str, Any]:
    """The torch.distributed backends this build has, and the NCCL version on CUDA."""
    dist = torch.distributed
    if not _safe(dist.is_available, False):
        return {"distributed_backends": [], "nccl_version": None}
    backends = [name for name in ("gloo", "nccl", "mpi")
                if _safe(getattr(dist, f"is_{name}_available", lambda: False), False)]
    nccl = _safe(torch.cuda.nccl.version, None) if cuda_ok and "nccl" in backends else None
    if isinstance(nccl, tuple):  # (2, 21, 5)
        nccl = ".".join(map(str, nccl))
    elif isinstance(nccl, int):  # older torch: 2215 = 2.21.5
        nccl = f"{nccl // 1000}.{nccl % 1000 // 100}.{nccl % 100}"
    return {"distributed_backends": backends, "nccl_version": nccl}


def _safe(fn: Any, default: Any) -> Any:
    try:
        return fn()
    except Exception:
        return default


def _cuda_devices(torch: Any) -> list[dict[str, Any]]:
    devices = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        devices.append({
            "index": i,
            "name": p.name,
            "memory_gib": round(p.total_memory / 2**30, 1),
            "compute_capability": f"{p.major}.{p.minor}",
        })
    return devices


def _cpu_autocast_works(torch: Any, dtype: Any) -> bool:
    """True when a tiny matmul under CPU autocast actually comes out in ``dtype``."""
    try:
        x = torch.ones(4, 4)
        with torch.autocast("cpu", dtype=dtype):
            return (x @ x).dtype == dtype
    except Exception:
        return False


def _format_cudnn(v: Any) -> str | None:
    if not isinstance(v, int) or v <= 0:
        return None
    # cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 used major*1000.
    major, rest = divmod(v, 10000) if v >= 90000 else divmod(v, 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


# --------------------------------------------------------------------------- check


def _version_tuple(v: str | None) -> tuple[int, ...]:
    """'2.14.1+cu130' -> (2, 14, 1); unparseable parts stop the tuple."""
    if not v:
        return ()
    parts = []
    for piece in v.split("+")[0].split("."):
        m = re.match(r"\d+", piece)
        if not m:
            break
        parts.append(int(m.group()))
    return tuple(parts)


def check_env(info: dict[str, Any]) -> list[Problem]:
    """Problems found in an info dict from ``collect_env`` (pure: reads only ``info``)."""
    problems: list[Problem] = []
    add = problems.append

    py = _version_tuple(info.get("python_version"))
    if py and py[:2] < MIN_PYTHON:
        need = ".".join(map(str, MIN_PYTHON))
        add(Problem(
            f"Python {info['python_version']} is too old; trainwell needs Python {need} or newer.",
            f"install Python {need}+ (e.g. from python.org, or `uv python install {need}`) and "
            f"create the virtual environment with it: python{need} -m venv .venv",
        ))

    torch_v = info.get("torch_version")
    if not torch_v:
        err = info.get("torch_error")
        add(Problem(
            "PyTorch is not installed or does not import" + (f" ({err})." if err else "."),
            "install it inside your virtual environment with the command from "
            "https://pytorch.org/get-started/locally/",
        ))

    tv = info.get("torchvision_version")
    if torch_v and not tv:
        add(Problem(
            "torchvision is not installed; the image datasets and models need it.",
            f"pip install torchvision=={_paired_torchvision(torch_v) or '<version paired with torch>'}"
            " (use the same index URL you installed torch from)",
        ))
    elif torch_v and tv:
        want = _paired_torchvision(torch_v)
        have = _version_tuple(tv)
        if want and have[:2] != _version_tuple(want)[:2]:
            add(Problem(
                f"torchvision {tv} does not match torch {torch_v} "
                f"(torch {'.'.join(map(str, _version_tuple(torch_v)[:2]))} pairs with torchvision "
                f"{want}); mismatched pairs fail at import or on the first image op.",
                f"pip install torchvision=={want} (same index URL as torch), "
                "or reinstall both together: pip install --force-reinstall torch torchvision",
            ))

    if not info.get("in_venv", True):
        add(Problem(
            "Not running inside a virtual environment; installs go into the system Python "
            "and can clash with other projects.",
            VENV_FIX,
            "warning",
        ))

    gpu = _gpu_problem(info)
    if gpu:
        add(gpu)
    busy = _busy_problem(info)
    if busy:
        add(busy)
    if info.get("launch_problem"):
        from trainwell.machine import LAUNCH_FIX

        add(Problem(f"torchrun's variables in this environment would stop a run: {info['launch_problem']}.",
                    LAUNCH_FIX))
    return problems


def _busy_problem(info: dict[str, Any]) -> Problem | None:
    """Other programs already keep the usable cores busy (1-minute load average at least the core count)."""
    load, cores = info.get("load_average_1m"), info.get("usable_cores")
    if not isinstance(load, (int, float)) or not isinstance(cores, int) or load < cores:
        return None
    return Problem(
        f"The CPUs are already busy: the load average over the last minute is {load:g} on {_plural(cores, 'usable core')}, "
        "so another process is using them; expect slower training.",
        "wait for the other work to finish, or train with --threads 1 (one thread loses the least to a busy machine)",
        "warning",
    )


def _paired_torchvision(torch_version: str) -> str | None:
    t = _version_tuple(torch_version)
    if len(t) < 2 or t[0] != 2:  # the +15 rule is only known for torch 2.x
        return None
    return f"0.{t[1] + TORCHVISION_MINOR_OFFSET}"


def _gpu_problem(info: dict[str, Any]) -> Problem | None:
    """A GPU is present but torch cannot use it. No GPU at all is fine: CPU works."""
    driver = info.get("nvidia_driver")
    build = info.get("torch_build") or ""
    if not driver or not info.get("torch_version"):
        return None
    if build == "CPU":
        return Problem(
            f"An NVIDIA GPU is present (driver {driver}) but the installed torch is a CPU-only "
            "build, so training will ignore the GPU.",
            CUDA_WHEEL_FIX + "; choose a CUDA version your driver supports (see nvidia-smi).",
        )
    if build.startswith("CUDA") and not info.get("cuda_available"):
        runtime = info.get("cuda_runtime") or "?"
        return Problem(
            f"torch is built for CUDA {runtime} but cannot use the GPU "
            f"(NVIDIA driver {driver}); the driver is probably too old for CUDA {runtime}.",
            f"update the NVIDIA driver to one that supports CUDA {runtime} "
            "(nvidia-smi shows the highest CUDA version the driver supports), or "
            + CUDA_WHEEL_FIX + " built for an older CUDA that driver "
            f"{driver} supports.",
        )
    return None


# --------------------------------------------------------------------------- verdict


def verdict(problems: list[Problem], info: dict[str, Any] | None = None) -> str:
    """One line summing up the report; ``info`` lets it name the device training will use."""
    errors = [p for p in problems if p.severity == "error"]
    warns = len(problems) - len(errors)
    if errors:
        return f"{_plural(len(problems), 'problem')} found: fix the errors above before training."
    device = _training_device(info) if info is not None else None
    suffix = f" ({_plural(warns, 'warning')} above)" if warns else ""
    if device is None:
        return f"OK: no problems found{suffix}."
    if device == "CPU":
        return (
            "OK: no GPU found; training will run on CPU "
            f"(fine for the built-in examples){suffix}."
        )
    return f"OK: ready to train on {device}{suffix}."


def _training_device(info: dict[str, Any]) -> str:
    devices = info.get("devices") or []
    if info.get("cuda_available") and devices:
        kind = "ROCm" if str(info.get("torch_build", "")).startswith("ROCm") else "CUDA"
        return f"{kind} ({len(devices)}x {devices[0]['name']})"
    if info.get("mps_available"):
        return "Apple MPS"
    return "CPU"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
