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
