"""`trainwell env`: report the Python/torch/GPU environment and what to fix in it."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainwell.env import Problem


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``env`` sub-command."""
    p = subparsers.add_parser(
        "env",
        help="show Python, torch and GPU facts, and what to fix before training",
        description=(
            "Report the Python, PyTorch and accelerator setup, list any problems with a "
            "concrete fix for each, and end with a one-line verdict. Always exits 0."
        ),
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the environment report; 0 even with problems, since it is only a report."""
    from trainwell.env import check_env, collect_env, verdict  # (here: `trainwell --help` stays quick)

    info = collect_env()
    problems = check_env(info)
    line = verdict(problems, info)
    if getattr(args, "json", False):
        # Plain stdout, not rich: scripts parse this, so no wrapping or markup.
        payload = {"info": info, "problems": [p.to_dict() for p in problems], "verdict": line}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return 0
    _print_report(info, problems, line)
    return 0


def _print_report(info: dict[str, Any], problems: list[Problem], line: str) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    table = Table(title="trainwell environment", show_header=False, title_justify="left")
    table.add_column("fact", style="bold")
    table.add_column("value")
    for label, value in _rows(info):
        table.add_row(label, escape(value))
    console.print(table)

    for p in problems:
        colour = "red" if p.severity == "error" else "yellow"
        console.print(f"[{colour}]{p.severity}:[/] {escape(p.what)}")
        console.print(f"  [bold]fix:[/] {escape(p.fix)}")
    ok = not any(p.severity == "error" for p in problems)
    console.print(f"[{'green' if ok else 'red'} bold]{escape(line)}[/]", soft_wrap=True)  # one line, for scripts


def _yes(v: Any) -> str:
    return "yes" if v else "no"


def _rows(info: dict[str, Any]) -> list[tuple[str, str]]:
    """Human labels for the info dict, in reading order; missing values show as 'n/a'."""
    def show(v: Any) -> str:
        return "n/a" if v is None else str(v)

    ram = info.get("ram_gib")
    rows = [
        ("Python", f"{info.get('python_version')} ({info.get('python_executable')})"),
        ("Virtual env", f"{_yes(info.get('in_venv'))} ({info.get('env_prefix')})"),
        ("OS", show(info.get("platform"))),
        ("Arch", show(info.get("machine"))),
        ("CPUs", show(info.get("cpu_count"))),
        ("usable cores", show(info.get("usable_cores"))
         + (f" ({info['local_processes']} processes on this machine)" if (info.get("local_processes") or 1) > 1 else "")),
        ("load average (1 min)", show(info.get("load_average_1m"))),
        ("RAM", "n/a" if ram is None else f"{ram} GiB"),
        ("torch", show(info.get("torch_version") or info.get("torch_error"))),
        ("torchvision", show(info.get("torchvision_version"))),
        ("torch build", show(info.get("torch_build"))),
        ("torch threads", f"{show(info.get('torch_threads'))} now; a run takes {show(info.get('default_threads'))} "
                          "(--threads N to choose)"),
        ("CUDA available", _yes(info.get("cuda_available"))),
        ("CUDA runtime / driver",
         f"{show(info.get('cuda_runtime'))} / {show(info.get('nvidia_driver'))}"),
        ("cuDNN", show(info.get("cudnn_version"))),
    ]
    for d in info.get("devices") or []:
        rows.append((
            f"GPU {d['index']}",
            f"{d['name']}, {d['memory_gib']} GiB, compute capability {d['compute_capability']}",
        ))
    rows += [
        ("MPS (Apple GPU)", _yes(info.get("mps_available"))),
        (f"bf16 ({show(info.get('amp_device'))})", _yes(info.get("bf16"))),
        (f"fp16 ({show(info.get('amp_device'))})", _yes(info.get("fp16"))),
        ("distributed backends", ", ".join(info.get("distributed_backends") or []) or "none"),
    ]
    if info.get("nccl_version"):
        rows.append(("NCCL", str(info["nccl_version"])))
    launch = info.get("launch")
    if launch:
        rows.append(("torchrun", f"rank {show(launch.get('rank'))} of world size {show(launch.get('world_size'))}, "
                                 f"local rank {show(launch.get('local_rank'))} of {show(launch.get('local_world_size'))}"
                                 f" on this machine, master {launch.get('master')}"))
    return rows
