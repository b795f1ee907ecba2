"""End-to-end: the real CLI on a small subset — train, files, predict, resume, kill -9, reproducibility."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import main_in

pytestmark = pytest.mark.slow

TINY = ["--set", "data.limit=300", "--set", "model.channels=[8,16]", "--set", "model.hidden=[32]",
        "--epochs", "2", "--no-progress"]


def run_cli(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run([sys.executable, "-m", "trainwell", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, map_location="cpu", weights_only=True)["model"]


def test_train_writes_a_complete_run_folder_and_predict_uses_it(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main_in(tmp_path, "train", "--out", "run", *TINY) == 0
    run = tmp_path / "run"
    assert capsys.readouterr().out.strip().endswith("run")  # the run folder's path is printed last
    for name in ("config.yaml", "env.json", "metrics.csv", "summary.json", "report.html", "doctor.json",
                 "checkpoints/last.pt", "checkpoints/best.pt"):
        assert (run / name).is_file(), name
    doctor = json.loads((run / "doctor.json").read_text())
    assert doctor["findings"] == []  # trainwell's own loop is correct: the doctor stays quiet
    assert doctor["internal_errors"] == []  # and none of its checks failed
    assert doctor["grad_norms"] and "features.0.weight" in doctor["grad_norms"][0]
    assert any((run / "tensorboard").iterdir())
    rows = list(csv.DictReader((run / "metrics.csv").open()))
    assert [r["epoch"] for r in rows] == ["1", "2"]
    assert set(rows[0]) >= {"epoch", "step", "train_loss", "val_loss", "val_accuracy", "lr", "seconds"}
    summary = json.loads((run / "summary.json").read_text())
    for key in ("test_accuracy", "val_accuracy", "best_epoch", "train_seconds", "samples_per_second", "parameters"):
        assert summary[key] is not None, key
    assert 0.0 <= summary["test_accuracy"] <= 1.0
    assert summary["split_sizes"] == {"train": 240, "val": 30, "test": 30}
    html = (run / "report.html").read_text()
    assert "data:image/png;base64," in html and "https://" not in html

    # A real digit from the data, written as a PNG the way a user would have it.
    from PIL import Image

    from trainwell.config import DataConfig
    from trainwell.data import build_data

    bundle = build_data(DataConfig(limit=300))
    x, y = bundle.test[0]
    Image.fromarray(x[0].numpy().astype(np.uint8)).save(tmp_path / "digit.png")
    assert main_in(tmp_path, "predict", "run", "digit.png", "--json", "--top-k", "3") == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result) == 1 and len(result[0]["top"]) == 3
    probs = [t["probability"] for t in result[0]["top"]]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1.0001

    # The prediction equals the model's own output on the same pixels through the training preprocessing.
    from trainwell.cli.predict import load_predictor
    from trainwell.data import Preprocess

    model, data = load_predictor(tmp_path / "run")
    pre = Preprocess.from_dict(data["preprocess"])
    with torch.inference_mode():
        expected = torch.softmax(model(pre(x.unsqueeze(0))), 1).max().item()
    assert result[0]["top"][0]["probability"] == pytest.approx(expected, abs=1e-5)

    # Resuming a finished run changes nothing.
    before = weights(run / "checkpoints/last.pt")
    assert main_in(tmp_path, "train", "--resume", "run") == 0
    after = weights(run / "checkpoints/last.pt")
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert json.loads((run / "doctor.json").read_text()) == doctor  # the doctor's history too
    assert len(list(csv.DictReader((run / "metrics.csv").open()))) == 2


def test_same_seed_gives_identical_runs(tmp_path: Path) -> None:
    run_cli("train", "--out", "a", *TINY, cwd=tmp_path)  # a fresh process ...
    assert main_in(tmp_path, "train", "--out", "b", *TINY) == 0  # ... and one that has already run other code

    def metrics(run: str) -> list[dict[str, str]]:
        rows = list(csv.DictReader((tmp_path / run / "metrics.csv").open()))
        return [{k: v for k, v in r.items() if k not in ("seconds", "data_wait")} for r in rows]  # timings differ

    assert metrics("a") == metrics("b")
    wa, wb = weights(tmp_path / "a/checkpoints/last.pt"), weights(tmp_path / "b/checkpoints/last.pt")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    assert main_in(tmp_path, "train", "--out", "c", *TINY, "--seed", "1") == 0
    wc = weights(tmp_path / "c/checkpoints/last.pt")
    assert not all(torch.equal(wa[k], wc[k]) for k in wa)


SLOW_MODEL = '''
import time
from torch import nn

class SlowNet(nn.Module):
    """Small, with dropout (global RNG) and slow enough to be killed mid-epoch."""
    def __init__(self, input_shape, num_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), nn.Dropout(0.3),
                                 nn.Linear(32, num_classes))
    def forward(self, x):
        if self.training:
            time.sleep(0.03)
        return self.net(x)
'''


def test_kill_9_mid_epoch_then_resume_equals_uninterrupted_run_bitwise(tmp_path: Path) -> None:
    (tmp_path / "slownet.py").write_text(SLOW_MODEL)
    # mnist-5k's recipe brings random affine augmentation and a one-cycle schedule: both must resume exactly.
    args = ["--model", "slownet:SlowNet", "--set", "data.limit=800", "--batch-size", "32", "--epochs", "2",
            "--checkpoint-every", "3", "--no-progress"]
    assert main_in(tmp_path, "train", "--out", "full", *args) == 0

    proc = subprocess.Popen([sys.executable, "-m", "trainwell", "train", "--out", "killed", *args], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = tmp_path / "killed/checkpoints/last.pt"
    deadline = time.monotonic() + 120
    while not last.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # into the middle of the next few steps (or a save)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "training finished before it could be killed"
    state = torch.load(last, weights_only=True)["state"]
    # Mid-epoch in either epoch (a loaded machine can be slow to send the signal).
    assert state["batch_in_epoch"] > 0, "the kill should land mid-epoch"
    assert not (tmp_path / "killed/summary.json").exists()

    assert main_in(tmp_path, "train", "--resume", "killed", "--model", "slownet:SlowNet") == 0
    full, resumed = weights(tmp_path / "full/checkpoints/last.pt"), weights(last)
    assert full.keys() == resumed.keys()
    assert all(torch.equal(full[k], resumed[k]) for k in full)
    rows_full = list(csv.DictReader((tmp_path / "full/metrics.csv").open()))
    rows_res = list(csv.DictReader((tmp_path / "killed/metrics.csv").open()))
    assert [r["train_loss"] for r in rows_full] == [r["train_loss"] for r in rows_res]


def test_help_does_not_import_torch() -> None:
    code = "import sys; from trainwell.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass\n" \
           "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("False")
