"""A resumed run keeps what the doctor saw before the resume; doctor.json is written at every epoch end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from trainwell.doctor.callback import DoctorCallback
from trainwell.engine.callbacks import Callback
from trainwell.engine.trainer import Trainer


class _Killed(Exception):
    pass


class _KillAfterFirstEpoch(Callback):
    """Keeps the trainer's checkpoint at the end of epoch 1 and what doctor.json held then, then dies."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.checkpoint: dict[str, Any] = {}
        self.doctor_json: dict[str, Any] = {}

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        self.checkpoint = trainer.state_dict()
        self.doctor_json = json.loads((self.run_dir / "doctor.json").read_text())
        raise _Killed


def _trainer(softmax: bool, callbacks: list[Callback]) -> Trainer:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1) if softmax else nn.Identity())
    data = TensorDataset(torch.randn(64, 4), torch.randint(0, 3, (64,)))
    return Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                   DataLoader(data, batch_size=4), epochs=2, callbacks=callbacks)  # 16 steps an epoch


@pytest.mark.parametrize("softmax_after_resume", [False, True])
def test_findings_and_grad_norms_from_before_a_resume_are_kept(tmp_path: Path, softmax_after_resume: bool) -> None:
    killer = _KillAfterFirstEpoch(tmp_path)
    with pytest.raises(_Killed):
        _trainer(True, [DoctorCallback(run_dir=tmp_path, show=False), killer]).fit()
    first = killer.doctor_json  # written at the epoch end, before the run died
    assert [f["id"] for f in first["findings"]] == ["softmax-before-cross-entropy"]
    assert [r["step"] for r in first["grad_norms"]] == list(range(1, 12))  # the sampled steps: 0-9, then 1 in 10

    resumed = _trainer(softmax_after_resume, [DoctorCallback(run_dir=tmp_path, show=False)])
    resumed.load_state_dict(killer.checkpoint)
    resumed.fit()
    final = json.loads((tmp_path / "doctor.json").read_text())
    assert [f["id"] for f in final["findings"]] == ["softmax-before-cross-entropy"]  # kept, and only once
    assert final["findings"][0] == first["findings"][0]
    assert final["grad_norms"][:11] == first["grad_norms"]
    assert [r["step"] for r in final["grad_norms"][11:]] == list(range(17, 28))  # sampled again from the resume
