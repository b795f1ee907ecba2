"""data_wait: the share of each epoch's training time spent waiting for the loader's next batch."""

from __future__ import annotations

import time
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import Dataset

import trainwell
from trainwell.data.bundle import TensorData


class _Slow(Dataset):
    """Each sample takes ``delay`` seconds to load."""

    def __init__(self, delay: float) -> None:
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(32, 4, generator=g)
        self.y = (self.x[:, 0] > 0).long()
        self.delay = delay

    def __len__(self) -> int:
        return 32

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        time.sleep(self.delay)
        return self.x[i], self.y[i]


def test_data_wait_is_the_share_of_epoch_time_spent_loading_and_reaches_the_report(tmp_path: Path) -> None:
    slow = trainwell.fit(nn.Linear(4, 2), _Slow(0.03), epochs=1, batch_size=8, progress="none", device="cpu",
                         out=tmp_path)
    in_memory = TensorData(_Slow(0.0).x, _Slow(0.0).y)  # no loader workers to start: little to wait for
    fast = trainwell.fit(nn.Linear(4, 2), in_memory, epochs=1, batch_size=8, progress="none", device="cpu")
    assert 0.6 < slow.history[0]["data_wait"] <= 1.0  # about 1 s of sleeping (over the loader workers)
    assert 0.0 <= fast.history[0]["data_wait"] < slow.history[0]["data_wait"] / 2
    assert slow.run_dir is not None
    assert "data_wait" in (slow.run_dir / "metrics.csv").read_text().splitlines()[0].split(",")
    assert "<th>Data wait</th>" in (slow.run_dir / "report.html").read_text()
