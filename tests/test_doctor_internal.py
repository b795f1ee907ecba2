"""The doctor's own failures: recorded and said, never breaking the run, never leaving patches behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset


def _explode(self, ev):  # type: ignore[no-untyped-def]
    raise RuntimeError("bug in a check")


def test_a_check_that_raises_inside_fit_is_said_and_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import trainwell
    from trainwell.doctor.checks.zero_grad import ZeroGradMissing

    monkeypatch.setattr(ZeroGradMissing, "on_backward_pre", _explode)
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randint(0, 3, (64,)))
    result = trainwell.fit(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)), data, epochs=2,
                           batch_size=16, progress=False, device="cpu", doctor=True, out=tmp_path / "fit")
    assert len(result.history) == 2  # training completed
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "zero-grad-missing" in line]
    assert len(lines) == 1, err  # said once, not once per step
    assert "bug in a check" in lines[0] and "unaffected" in lines[0]
    errors = json.loads((tmp_path / "fit" / "doctor.json").read_text())["internal_errors"]
    assert errors == ["zero-grad-missing.on_backward_pre: RuntimeError: bug in a check"]
