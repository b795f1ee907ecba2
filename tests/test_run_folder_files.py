"""What a run folder holds agrees with what the run returns."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch.utils.data import TensorDataset

import trainwell


def test_summary_json_equals_the_summary_returned(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(96, 6, generator=g), torch.randint(0, 3, (96,), generator=g)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    result = trainwell.fit(model, TensorDataset(x[:64], y[:64]), TensorDataset(x[64:], y[64:]), epochs=2,
                           out=tmp_path / "run", progress=False, doctor=True)
    assert result.run_dir is not None
    on_disk = json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8"))
    assert "doctor_findings" in on_disk  # added by the doctor's callback, before the file is written
    assert on_disk == json.loads(json.dumps(result.summary, default=str))
