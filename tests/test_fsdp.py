"""FSDP (``--strategy fsdp``): each process holds a shard of the model, and the training is still one process's:
the same weights after 2 epochs on the built-in MLP and CNN, consolidated checkpoints that predict and resume on
2 processes and on 1, and plain refusals where it does not go yet. (gloo on the CPU, 2 processes.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from torch import nn

from test_ddp import CNN, COMMON, FAULTY, _gap, _train, _weights
from trainwell.engine.fsdp import shard_units

MODELS = {"mlp": ["--model", "mlp", "--set", "model.hidden=[32,32]"], "cnn": ["--model", "cnn", *CNN]}


def test_blocks_holding_a_share_of_the_parameters_are_sharded_innermost_first_then_the_model() -> None:
    model = nn.Sequential(nn.Sequential(nn.Linear(100, 100), nn.Linear(100, 2)), nn.ReLU(), nn.Linear(100, 50),
                          nn.Linear(2, 2))
    units = shard_units(model, 0.1)
    # 10,100 + 202 | 5,050 | 6: the first block (and its big Linear inside it, first), the second Linear, the model.
    assert units == [model[0][0], model[0], model[2], model]
    lone = nn.Linear(3, 3)
    assert shard_units(lone) == [lone]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_two_processes_with_fsdp_end_with_the_weights_of_one(tmp_path: Path, name: str) -> None:
    one = _train([*COMMON, *MODELS[name], "--out", "one"], tmp_path)
    assert one.returncode == 0, one.stdout[-3000:]
    two = _train([*COMMON, *MODELS[name], "--nproc", "2", "--strategy", "fsdp", "--out", "two"], tmp_path)
    assert two.returncode == 0, two.stdout[-3000:]
    gap = _gap(_weights(tmp_path / "one"), _weights(tmp_path / "two"))
    assert gap <= 1e-4, f"max weight difference {gap:.3g}"
    print(f"{name}: max abs weight difference, 1 process vs fsdp on 2: {gap:.3g}")
    summary, reference = (json.loads((tmp_path / run / "summary.json").read_text()) for run in ("two", "one"))
    assert summary["strategy"] == "fsdp" and summary["world_size"] == 2 and reference["strategy"] == "single"
    for key in ("val_loss", "val_accuracy", "test_loss", "test_accuracy"):
        assert summary[key] == pytest.approx(reference[key], abs=1e-5), key
    assert "doctor does not watch fsdp runs" not in two.stdout  # (--no-doctor: nothing to say)
    # best.pt is an ordinary state dict: it predicts in one process.
    from trainwell.cli.predict import load_predictor

    model, _ = load_predictor(tmp_path / "two", "best")
    shape = (2, 64) if name == "mlp" else (2, 1, 8, 8)
    assert torch.isfinite(model(torch.zeros(shape))).all()


@pytest.mark.slow
def test_a_run_saved_by_two_fsdp_processes_resumes_on_two_and_on_one(tmp_path: Path) -> None:
    """Rank 1 dies in step 30 of 46 (last checkpoint: step 25). Resumed by 2 processes (fsdp again) and by 1, both
    end with the weights of the uninterrupted fsdp run."""
    shutil.copy(FAULTY, tmp_path / "faulty.py")
    args = [*COMMON, "--model", "faulty:Net", "--checkpoint-every", "5", "--strategy", "fsdp"]
    straight = _train([*args, "--nproc", "2", "--out", "straight"], tmp_path, PYTHONPATH=str(tmp_path))
    assert straight.returncode == 0, straight.stdout[-3000:]
    killed = _train([*args, "--nproc", "2", "--out", "run"], tmp_path, PYTHONPATH=str(tmp_path), TW_KILL_AT="30")
    assert killed.returncode != 0 and (tmp_path / "run" / "checkpoints" / "last.pt").is_file(), killed.stdout[-3000:]
    shutil.copytree(tmp_path / "run", tmp_path / "run1")
    on_two = _train(["--resume", "run", "--nproc", "2", "--model", "faulty:Net", "--no-progress"], tmp_path,
                    PYTHONPATH=str(tmp_path))
    assert on_two.returncode == 0, on_two.stdout[-3000:]
    on_one = _train(["--resume", "run1", "--model", "faulty:Net", "--no-progress"], tmp_path, PYTHONPATH=str(tmp_path))
    assert on_one.returncode == 0, on_one.stdout[-3000:]
    assert "train.strategy=fsdp with one process" in on_one.stdout  # said, not silent
    for run in ("run", "run1"):
        gap = _gap(_weights(tmp_path / "straight"), _weights(tmp_path / run))
        assert gap <= 1e-4, f"{run}: max weight difference {gap:.3g}"


@pytest.mark.slow
def test_what_fsdp_does_not_do_yet_is_refused_once_with_the_way_out(tmp_path: Path) -> None:
    done = _train([*COMMON, "--model", "mlp", "--nproc", "2", "--strategy", "fsdp", "--precision", "bf16-mixed",
                   "--out", "run"], tmp_path)
    assert done.returncode == 2, done.stdout[-3000:]
    assert done.stdout.count("The fsdp strategy trains in float32 without torch.compile for now") == 1
    assert "use --strategy ddp" in done.stdout
