"""FSDP (``--strategy fsdp``): each process holds a shard of the model, and the training is still one process's:
the same weights after 2 epochs on the built-in MLP and CNN, a consolidated best.pt that predicts, sharded last
checkpoints that resume on 2 processes and on 1, and plain refusals where it does not go yet. (gloo on the CPU,
2 processes.)"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from test_ddp import CNN, COMMON, FAULTY, _env, _gap, _run, _train, _weights
from trainwell.engine.fsdp import shard_units

# The MLP's runs clip gradients (to a norm that changes the weights by 0.05): fsdp clips its sharded gradients by
# the whole gradient's norm, as one process does.
MODELS = {"mlp": ["--model", "mlp", "--set", "model.hidden=[32,32]", "--set", "train.grad_clip=0.05"],
          "cnn": ["--model", "cnn", *CNN]}


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
    # The CNN's fsdp run also recomputes its blocks' activations in backward (activation checkpointing inside the
    # sharded units): the same numbers.
    recompute = ["--set", "model.checkpoint=true"] if name == "cnn" else []
    two = _train([*COMMON, *MODELS[name], *recompute, "--nproc", "2", "--strategy", "fsdp", "--out", "two"],
                 tmp_path)
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
def test_a_run_saved_by_two_fsdp_processes_resumes_on_two_and_on_one(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank 1 dies in step 30 of 46 (last checkpoint: step 25). Resumed by 2 processes (fsdp again) and by 1, both
    end with the weights of the uninterrupted fsdp run."""
    shutil.copy(FAULTY, tmp_path / "faulty.py")
    args = [*COMMON, "--model", "faulty:Net", "--checkpoint-every", "5", "--strategy", "fsdp"]
    straight = _train([*args, "--nproc", "2", "--out", "straight"], tmp_path, PYTHONPATH=str(tmp_path))
    assert straight.returncode == 0, straight.stdout[-3000:]
    killed = _train([*args, "--nproc", "2", "--out", "run"], tmp_path, PYTHONPATH=str(tmp_path), TW_KILL_AT="30")
    assert killed.returncode != 0, killed.stdout[-3000:]
    assert "the run folder is kept with checkpoints/last.shards" in killed.stdout
    # The last checkpoint is sharded: one piece per process, no process wrote the whole; best.pt is whole.
    checkpoints = tmp_path / "run" / "checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == ["best.pt", "last.shards"]
    pieces = sorted((checkpoints / "last.shards").iterdir())
    assert [p.suffix for p in pieces] == [".safetensors", ".safetensors", ".pt"], pieces
    from safetensors import safe_open

    with safe_open(pieces[0], "pt") as first, safe_open(pieces[1], "pt") as second:
        halves = [first.get_slice("model/body.1.weight").get_shape(), second.get_slice("model/body.1.weight").get_shape()]
    whole = list(torch.load(checkpoints / "best.pt", weights_only=True)["model"]["body.1.weight"].shape)
    assert halves[0][0] + halves[1][0] == whole[0] and halves[0][1:] == whole[1:], (halves, whole)
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
    # Resumed by 1 process, the run's last checkpoint is an ordinary last.pt again (one, not both).
    assert sorted(p.name for p in (tmp_path / "run1" / "checkpoints").iterdir()) == ["best.pt", "last.pt"]
    # The last sharded checkpoint predicts in one process, its pieces put together.
    from trainwell.cli.predict import load_predictor

    monkeypatch.syspath_prepend(str(tmp_path))
    model, _ = load_predictor(tmp_path / "run", "last", typed={"model.name": "faulty:Net"})
    assert torch.equal(model.state_dict()["body.1.weight"], _weights(tmp_path / "run")["body.1.weight"])


@pytest.mark.slow
def test_what_fsdp_does_not_do_yet_is_refused_once_with_the_way_out(tmp_path: Path) -> None:
    done = _train([*COMMON, "--model", "mlp", "--nproc", "2", "--strategy", "fsdp", "--compile", "--out", "run"],
                  tmp_path)
    assert done.returncode == 2, done.stdout[-3000:]
    assert done.stdout.count("The fsdp strategy trains without torch.compile for now") == 1
    assert "use --strategy ddp to compile" in done.stdout


PROBE = """
import os
from torch import nn


class Net(nn.Module):
    \"\"\"The built-in CNN's shape in small, recording (rank 0, training) what its forward computes in.\"\"\"

    def __init__(self, input_shape, num_classes):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(8 * 64, 32), nn.ReLU(), nn.Linear(32, num_classes))

    def forward(self, x):
        features = self.conv(x)
        out = self.head(features)
        if self.training and os.environ.get("RANK", "0") == "0" and not os.path.exists("dtypes.txt"):
            with open("dtypes.txt", "w") as f:
                f.write(f"{x.dtype} {features.dtype} {out.dtype}")
        return out
"""


@pytest.mark.slow
@pytest.mark.parametrize(("precision", "dtype"), [("bf16-mixed", "torch.bfloat16"), ("16-mixed", "torch.float16")])
def test_mixed_precision_under_fsdp_computes_in_16_bits_and_keeps_float32_weights(tmp_path: Path, precision: str,
                                                                                 dtype: str) -> None:
    """FSDP's own policy: the forward (BatchNorm included) in 16 bits, the weights, the optimizer's steps and the
    checkpoints in float32; it learns as one process in the same precision does, and is not float32 in disguise.
    (16-mixed keeps its gradient scaler, whose state is in the summary.)"""
    (tmp_path / "probe.py").write_text(PROBE)
    args = [*COMMON, "--model", "probe:Net", "--epochs", "3"]
    runs = {"mixed": ["--nproc", "2", "--strategy", "fsdp", "--precision", precision],
            "fp32": ["--nproc", "2", "--strategy", "fsdp"], "one": ["--precision", precision]}
    for name, extra in runs.items():
        done = _train([*args, *extra, "--out", name], tmp_path, PYTHONPATH=str(tmp_path))
        assert done.returncode == 0, done.stdout[-3000:]
        if name == "mixed":
            assert (tmp_path / "dtypes.txt").read_text() == f"{dtype} {dtype} {dtype}"
        (tmp_path / "dtypes.txt").unlink()
    weights = _weights(tmp_path / "mixed")
    assert all(v.dtype == torch.float32 for k, v in weights.items() if "num_batches" not in k)
    best = torch.load(tmp_path / "mixed" / "checkpoints" / "best.pt", weights_only=True)["model"]
    assert best["head.0.weight"].dtype == torch.float32
    assert _gap(weights, _weights(tmp_path / "fp32")) > 1e-3  # not float32 in disguise
    summary = {name: json.loads((tmp_path / name / "summary.json").read_text()) for name in runs}
    assert summary["mixed"]["val_loss"] == pytest.approx(summary["one"]["val_loss"], abs=0.05)
    print(precision, {name: round(s["val_loss"], 4) for name, s in summary.items()})


OVERFLOW = """
import os
import sys

import torch
from torch import nn

from trainwell.engine import distributed
from trainwell.engine.precision import FP16Mixed

device = torch.device("cpu")
strategy = distributed.strategy_for(device, name="fsdp")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
precision = strategy.adopt_precision(FP16Mixed(device, init_scale=1024.0))
forward = strategy.wrap(model)
strategy.rebind(optimizer, model)
before = [p.to_local().clone() for p in model.parameters()]
precision.backward(forward(torch.randn(4, 8)).pow(2).mean())
if strategy.rank == 1 and sys.argv[1] == "inf":  # rank 1's shard of one gradient overflows; rank 0's does not
    model[0].weight.grad.to_local()[0, 0] = float("inf")
precision.unscale(optimizer)
stepped = precision.step(optimizer)
changed = any(not torch.equal(b, p.to_local()) for b, p in zip(before, model.parameters()))
print(f"rank {strategy.rank}: stepped={stepped} changed={changed} scale={precision.scaler.get_scale():g}", flush=True)
distributed.leave(0)
"""


@pytest.mark.slow
def test_16_mixed_under_fsdp_skips_the_step_everywhere_when_one_shard_overflows(tmp_path: Path) -> None:
    """The gradient scaler's overflow check spans the shards: an inf in one process's shard of a gradient makes
    every process skip the step and lower the scale alike (the processes' weights stay the same model)."""
    (tmp_path / "overflow.py").write_text(OVERFLOW)
    for case, said in (("inf", "stepped=False changed=False scale=512"), ("finite", "stepped=True changed=True "
                                                                                    "scale=1024")):
        done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                     "overflow.py", case], _env(OMP_NUM_THREADS="1"), tmp_path)
        assert done.returncode == 0, done.stdout[-3000:]
        for rank in (0, 1):
            assert f"rank {rank}: {said}" in done.stdout, done.stdout[-3000:]
