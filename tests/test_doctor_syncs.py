"""The doctor reads tensors back to the host (a GPU pipeline stall) on sampled steps only.

Counted on CPU: every way Python code reads a tensor's values is wrapped with a counter that
counts the calls made while a doctor frame is on the stack. The loop itself reads nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import trainwell.doctor
from trainwell.doctor.session import Session

DOCTOR = str(Path(trainwell.doctor.__file__).parent)
LOSS_READ = Session._note_loss.__code__  # where the backward() wrapper and a reporting loop keep each loss
READS = {torch.Tensor: ("item", "tolist", "__float__", "__int__", "__bool__", "__index__", "__complex__", "cpu",
                        "numpy", "nonzero", "__format__", "__repr__"),
         torch: ("equal", "allclose", "unique", "nonzero", "masked_select")}


@pytest.fixture
def doctor_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A one-item list: how many tensor reads the doctor's code has made so far."""
    count = [0]

    def counted(original):  # type: ignore[no-untyped-def]
        def read(*args, **kwargs):  # type: ignore[no-untyped-def]
            frame = sys._getframe(1)
            if frame.f_code is LOSS_READ and args[0].is_cpu:
                return original(*args, **kwargs)  # a CPU loss is read as it comes: there is no device to wait for
            while frame is not None:
                if frame.f_code.co_filename.startswith(DOCTOR):
                    count[0] += 1
                    break
                frame = frame.f_back
            return original(*args, **kwargs)

        return read

    for owner, names in READS.items():
        for name in names:
            monkeypatch.setattr(owner, name, counted(getattr(owner, name)))
    yield count


def test_the_doctor_reads_tensors_on_sampled_steps_only(doctor_reads: list[int]) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = DataLoader(TensorDataset(torch.randn(256, 8), torch.randint(0, 3, (256,))), batch_size=8)
    per_step: list[tuple[bool, int]] = []  # (sampled, reads during the step)
    with trainwell.doctor.watch(show=False) as session:
        batches = iter(data)
        for _ in range(300):
            sampled, before = session.sampled, doctor_reads[0]
            try:
                x, y = next(batches)
            except StopIteration:
                batches = iter(data)
                x, y = next(batches)
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            per_step.append((sampled, doctor_reads[0] - before))
    unsampled = [n for sampled, n in per_step if not sampled]
    assert len(unsampled) > 250
    assert sum(unsampled) == 0, [(i, n) for i, (s, n) in enumerate(per_step) if not s and n]
    assert sum(n for sampled, n in per_step if sampled) > 0  # the counters do count the doctor's reads
    assert session.findings == [] and session.internal_errors == []
    assert len(session.losses) == 300  # every loss is still known, read back on sampled steps


def test_a_nan_batch_on_a_step_that_is_not_sampled_is_still_found() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(8, 8), torch.randint(0, 3, (8,))
    with trainwell.doctor.watch(show=False) as session:
        for step in range(200):
            batch = x.clone()
            if step == 155:  # not sampled (after step 100 only 1 in 25 is)
                batch[3, 2] = float("nan")
            opt.zero_grad()
            F.cross_entropy(model(batch), y).backward()
            opt.step()
    found = {f.id: f for f in session.findings}
    assert "nonfinite-loss" in found
    assert found["nonfinite-loss"].evidence["cause"] == "weights_data"  # the data, not the learning rate
    assert "backward call 156" in found["nonfinite-loss"].message  # the first non-finite loss, not a later one


def test_a_sampled_step_reads_back_few_times(doctor_reads: list[int]) -> None:
    """On a sampled step past the start, the doctor's reads are batched: norms and comparisons of several
    tensors come back together, not one wait per tensor (each is a pipeline stall on a GPU)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(512, 8), torch.randint(0, 3, (512,))
    late: list[int] = []
    with trainwell.doctor.watch(show=False) as session:
        for step in range(400):
            sampled, before = session.sampled, doctor_reads[0]
            i = step % 16 * 32
            opt.zero_grad()
            F.cross_entropy(model(x[i:i + 32]), y[i:i + 32]).backward()
            opt.step()
            if sampled and step >= 100:
                late.append(doctor_reads[0] - before)
    assert session.findings == [] and session.internal_errors == []
    assert len(late) == len([s for s in range(100, 400) if Session.sampled_at(s)]) == 9, late
    assert max(late) <= 16, late  # 14 now (16 before the gradient norms were shared); 45 when each was read alone
