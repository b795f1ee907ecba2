"""Tests for the `trainwell env` report: collection on this machine, checks on fake machines."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest
import torch

from trainwell.cli import env as env_cli
from trainwell.env import Problem, check_env, collect_env, verdict


def healthy_cpu_info(**overrides: Any) -> dict[str, Any]:
    """A fake, healthy CPU-only machine inside a venv; tests break one thing at a time."""
    info: dict[str, Any] = {
        "python_version": "3.11.7",
        "python_executable": "/proj/.venv/bin/python",
        "os": "Linux",
        "platform": "Linux-6.1-x86_64",
        "machine": "x86_64",
        "cpu_count": 8,
        "ram_gib": 16.0,
        "in_venv": True,
        "env_prefix": "/proj/.venv",
        "torchvision_version": "0.29.1",
        "nvidia_driver": None,
        "torch_version": "2.14.1",
        "torch_error": None,
        "torch_build": "CPU",
        "cuda_runtime": None,
        "hip_version": None,
        "cuda_available": False,
        "devices": [],
        "cudnn_version": None,
        "mps_available": False,
        "amp_device": "cpu",
        "bf16": True,
        "fp16": True,
        "torch_threads": 8,
        "usable_cores": 8,
        "local_processes": 1,
        "default_threads": 8,
        "load_average_1m": 0.5,
        "launch": None,
        "distributed_backends": ["gloo"],
        "nccl_version": None,
    }
    info.update(overrides)
    return info


def _matching(problems: list[Problem], word: str) -> list[Problem]:
    return [p for p in problems if word.lower() in p.what.lower()]


# ------------------------------------------------------------------ this machine


def test_collect_env_reports_this_torch() -> None:
    info = collect_env()
    assert info["torch_version"] == torch.__version__
    # The build label follows torch.version: "CPU" for CPU wheels, "CUDA x.y" for CUDA wheels.
    if torch.version.cuda is None and not getattr(torch.version, "hip", None):
        assert info["torch_build"] == "CPU"
    elif torch.version.cuda:
        assert info["torch_build"] == f"CUDA {torch.version.cuda}"
    assert info["cuda_available"] == torch.cuda.is_available()
    assert isinstance(info["cpu_count"], int) and info["cpu_count"] >= 1
    assert isinstance(info["bf16"], bool) and isinstance(info["fp16"], bool)
    json.dumps(info)  # must be JSON-serialisable for --json


def test_json_output_parses(capsys: pytest.CaptureFixture[str]) -> None:
    assert env_cli.run(argparse.Namespace(json=True)) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"info", "problems", "verdict"}
    assert out["info"]["torch_version"] == torch.__version__
    for p in out["problems"]:
        assert set(p) == {"what", "fix", "severity"}
    assert isinstance(out["verdict"], str) and "\n" not in out["verdict"]


def test_table_output_ends_with_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert env_cli.run(argparse.Namespace(json=False)) == 0
    out = capsys.readouterr().out
    assert "torch build" in out
    assert out.strip().splitlines()[-1].startswith(("OK", "1 problem", "2 problems", "3 problems"))


def test_add_parser_registers_env() -> None:
    parser = argparse.ArgumentParser(prog="trainwell")
    env_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["env", "--json"])
    assert args.json is True and args.func is env_cli.run


# ------------------------------------------------------------------ fake machines


def test_healthy_cpu_machine_has_no_errors() -> None:
    info = healthy_cpu_info()
    problems = check_env(info)
    assert not [p for p in problems if p.severity == "error"]
    assert problems == []
    line = verdict(problems, info)
    assert line.startswith("OK") and "CPU" in line


def test_cuda_wheel_without_any_gpu_is_fine() -> None:
    # The default Linux pip wheel is a CUDA build; with no NVIDIA driver that is just CPU.
    info = healthy_cpu_info(torch_build="CUDA 13.0", cuda_runtime="13.0")
    assert check_env(info) == []


def test_old_python_is_flagged() -> None:
    problems = _matching(check_env(healthy_cpu_info(python_version="3.9.18")), "Python 3.9")
    assert len(problems) == 1 and problems[0].severity == "error"
    assert "3.11" in problems[0].fix


def test_torchvision_mismatch_is_flagged() -> None:
    problems = check_env(healthy_cpu_info(torchvision_version="0.28.0"))
    (p,) = _matching(problems, "torchvision")
    assert "0.29" in p.fix


def test_torchvision_local_tags_still_pair() -> None:
    info = healthy_cpu_info(torch_version="2.14.1+cu130", torchvision_version="0.29.1+cu130")
    assert check_env(info) == []


def test_torchvision_missing_is_flagged() -> None:
    (p,) = _matching(check_env(healthy_cpu_info(torchvision_version=None)), "torchvision")
    assert "pip install torchvision==0.29" in p.fix


def test_cpu_build_with_nvidia_gpu_is_flagged() -> None:
    problems = check_env(healthy_cpu_info(nvidia_driver="550.54.15"))
    (p,) = _matching(problems, "CPU-only")
    assert p.severity == "error" and "pytorch.org" in p.fix


def test_cuda_build_that_cannot_see_gpu_names_versions() -> None:
    info = healthy_cpu_info(
        torch_build="CUDA 13.0", cuda_runtime="13.0", cuda_available=False,
        nvidia_driver="470.82.01",
    )
    (p,) = _matching(check_env(info), "cannot use the GPU")
    assert "13.0" in p.fix and "470.82.01" in p.fix


def test_no_venv_is_a_warning_only() -> None:
    info = healthy_cpu_info(in_venv=False)
    problems = check_env(info)
    assert [p.severity for p in problems] == ["warning"]
    assert "python -m venv .venv" in problems[0].fix
    assert verdict(problems, info).startswith("OK")


def test_verdict_counts_problems_and_names_gpu() -> None:
    bad = check_env(healthy_cpu_info(python_version="3.10.0", torchvision_version="0.1.0"))
    assert verdict(bad).startswith("2 problems found")
    gpu = healthy_cpu_info(
        torch_build="CUDA 13.0", cuda_available=True, nvidia_driver="580.1",
        devices=[{"index": 0, "name": "NVIDIA H200", "memory_gib": 139.8,
                  "compute_capability": "9.0"}],
    )
    assert verdict(check_env(gpu), gpu) == "OK: ready to train on CUDA (1x NVIDIA H200)."


# ------------------------------------------------------------------ load, threads and distributed facts


def test_a_busy_machine_is_a_warning_that_suggests_one_thread() -> None:
    (p,) = check_env(healthy_cpu_info(usable_cores=2, load_average_1m=2.4))
    assert p.severity == "warning" and "another process is using them" in p.what and "2.4" in p.what
    assert "--threads 1" in p.fix
    assert verdict([p], healthy_cpu_info()).startswith("OK")
    assert check_env(healthy_cpu_info(usable_cores=2, load_average_1m=1.9)) == []
    assert check_env(healthy_cpu_info(load_average_1m=None)) == []  # no load average (Windows)


def test_collect_env_reads_the_load_and_torchrun_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell import machine

    monkeypatch.setattr(machine.os, "getloadavg", lambda: (64.0, 1.0, 1.0))
    monkeypatch.setattr(machine, "usable_cores", lambda **kw: 4)
    for key, value in {"WORLD_SIZE": "8", "RANK": "5", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                       "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    info = collect_env()
    assert info["launch"] == {"world_size": 8, "rank": 5, "local_rank": 1, "local_world_size": 2,
                              "master": "10.0.0.1:29500"}
    assert (info["usable_cores"], info["local_processes"], info["default_threads"]) == (4, 2, 2)
    assert info["load_average_1m"] == 64.0
    assert _matching(check_env(info), "CPUs are already busy")
    rows = dict(env_cli._rows(info))
    assert rows["torchrun"].startswith("rank 5 of world size 8, local rank 1 of 2")
    assert "a run takes 2" in rows["torch threads"]
    json.dumps(info)


def test_without_torchrun_there_are_no_launch_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")  # a partial set (e.g. another tool's variable) is not a launch
    for key in ("RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(key, raising=False)
    info = collect_env()
    assert info["launch"] is None and "torchrun" not in dict(env_cli._rows(info))


def test_distributed_backends_are_reported() -> None:
    info = collect_env()
    if torch.distributed.is_available():
        assert "gloo" in info["distributed_backends"] or not torch.distributed.is_gloo_available()
        assert ("nccl" in info["distributed_backends"]) == torch.distributed.is_nccl_available()
    rows = dict(env_cli._rows(healthy_cpu_info(distributed_backends=["gloo", "nccl"], nccl_version="2.21.5")))
    assert rows["distributed backends"] == "gloo, nccl" and rows["NCCL"] == "2.21.5"
    assert dict(env_cli._rows(healthy_cpu_info(distributed_backends=[])))["distributed backends"] == "none"


@pytest.mark.cuda
def test_nccl_version_on_cuda() -> None:
    info = collect_env()
    if torch.distributed.is_available() and torch.distributed.is_nccl_available():
        assert info["nccl_version"] and info["nccl_version"][0].isdigit()
