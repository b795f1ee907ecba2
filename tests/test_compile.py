"""``--compile``: the model runs through torch.compile, checkpoints keep plain state_dict keys (a run saved
compiled loads into a plain model), and the doctor keeps working on the compiled model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.slow  # torch.compile warms up for tens of seconds on a CPU


def test_train_compiled_with_the_doctor_then_predict_with_a_plain_model(tmp_path: Path) -> None:
    from trainwell.cli import main
    from trainwell.cli.predict import load_predictor
    from trainwell.config import DataConfig
    from trainwell.data import Preprocess, build_data

    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert main(["train", "--out", "run", "--model", "mlp", "--set", "model.hidden=[16]", "--set",
                     "data.limit=100", "--batch-size", "16", "--epochs", "1", "--no-progress", "--compile"]) == 0
    finally:
        os.chdir(old)
    run = tmp_path / "run"
    saved = torch.load(run / "checkpoints" / "last.pt", map_location="cpu", weights_only=True)["model"]
    assert saved and not any(k.startswith(("_orig_mod.", "module.")) for k in saved)
    doctor = json.loads((run / "doctor.json").read_text())
    assert doctor["findings"] == [] and doctor["grad_norms"]  # the doctor ran, and found nothing wrong

    model, data = load_predictor(run)  # a plain, uncompiled model
    assert not isinstance(model, torch._dynamo.eval_frame.OptimizedModule)
    x, _ = build_data(DataConfig(limit=100)).test[0]
    with torch.inference_mode():
        probs = torch.softmax(model(Preprocess.from_dict(data["preprocess"])(x.unsqueeze(0))), 1)
    assert probs.shape == (1, 10) and torch.isfinite(probs).all()



_GRAPH_BREAKS = """
import torch
from torch import nn
from torch._dynamo.utils import counters

torch.manual_seed(0)
x = torch.randn(256, 8)
y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
compiled = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), 1e-3)
for step in range(30):
    loss = nn.functional.cross_entropy(compiled(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("BREAKS", sum(counters["graph_break"].values()))
"""


def test_compiled_relus_stay_in_the_graph_under_the_doctor(tmp_path: Path) -> None:
    """Dynamo learns which function `torch.relu` is the first time it traces, once per process. In a script that
    compiles its model, that is step 0, a sampled step, when the doctor's watched ReLU stands in for it: the real
    one must still be known afterwards, or every ReLU of the compiled model breaks the graph on the steps in
    between (and Dynamo prints a warning the script never gave)."""
    import subprocess
    import sys

    script = tmp_path / "compiled.py"
    script.write_text(_GRAPH_BREAKS)
    proc = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", str(script)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "BREAKS 0" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "does not know how to trace" not in proc.stderr
