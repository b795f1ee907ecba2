"""trainwell's loop reports its training micro-batches between the doctor's windows (``Session.loop_reports``):
the backward() and DataLoader wrappers are out there, and what the session records is what they would have."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, dataloader

import trainwell
from trainwell.doctor.callback import DoctorCallback
from trainwell.doctor.session import Session
from trainwell.engine.callbacks import Callback


class _Look(Callback):
    """Notes, after each step, whether the session's wrappers are in place and the loop reports."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, bool, bool, bool]] = []
        self.session: Session | None = None

    def on_train_batch_end(self, trainer: Any, loss: Any) -> None:
        self.session = next(c for c in trainer.callbacks if isinstance(c, DoctorCallback)).session
        wrapped = torch.Tensor.backward is not _BACKWARD
        self.seen.append((trainer.state.step, wrapped, trainer.step_watch is not None, trainer.call_watch is not None))


_BACKWARD = torch.Tensor.backward


def _records(session: Session) -> dict[str, Any]:
    return {"losses": session.losses, "loss_steps": session.loss_steps, "batches": session.batches,
            "backward_count": session.backward_count, "shared_backwards": session.shared_backwards,
            "steps": session.step, "fed": len(session._fed), "last_forward": session.last_forward,
            "findings": sorted(f.id for f in session.findings)}


def _fit(accumulate: int, reports: bool, monkeypatch: pytest.MonkeyPatch, val: Any = None) -> tuple[_Look, Any]:
    if not reports:
        monkeypatch.setattr(Session, "loop_reports", lambda self, switch, dataset: None)
    torch.manual_seed(0)
    x, y = torch.randn(600, 8), torch.randint(0, 3, (600,))  # 600 rows, batch 16: the last batch of each epoch has 8
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    look = _Look()
    result = trainwell.fit(model, DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True), val, epochs=2,
                           progress=False, device="cpu", doctor=True, accumulate=accumulate, callbacks=[look])
    monkeypatch.undo()
    return look, result


@pytest.mark.parametrize("accumulate", [1, 2])
def test_the_loops_reports_record_what_the_wrappers_would(accumulate: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same run with the loop reporting between windows and with the wrappers there on every step: the same
    losses (and the steps they came at), batches, backward passes, model calls and findings."""
    torch.manual_seed(1)
    val = TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
    reported, _ = _fit(accumulate, True, monkeypatch, val)
    wrapped, _ = _fit(accumulate, False, monkeypatch, val)
    assert reported.session is not None and wrapped.session is not None
    assert _records(reported.session) == _records(wrapped.session)
    assert any(by_loop for _, _, by_loop, _ in reported.seen)
    assert not any(by_loop for _, _, by_loop, _ in wrapped.seen)


def test_between_windows_the_loop_reports_and_the_wrappers_are_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps in a window have the backward() wrapper and the model-call reports; the others have the loop's step
    reports alone. Either way each step is watched, and everything is put back at the end."""
    next_before = dataloader._BaseDataLoaderIter.__next__
    look, _ = _fit(1, True, monkeypatch)
    assert len(look.seen) == 76  # 38 batches an epoch (37 of 16 and one of 8), 2 epochs
    for step, wrapped, by_loop, calls in look.seen:
        # (the state after step ``step``, whose post-hook already set up the next step)
        window = Session.sampled_at(step) or Session.sampled_at(step - 1)
        assert wrapped == calls == (not by_loop) == window, step
    assert torch.Tensor.backward is _BACKWARD and dataloader._BaseDataLoaderIter.__next__ is next_before


def test_a_leak_from_batches_trained_between_windows_is_still_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches trained on steps the loop reports still count as training rows: a validation set copied from the
    batches of steps 41-48 (counted from 0; 40 is sampled, so 41 ends its window and 42-48 are between windows) is
    split-leakage."""
    torch.manual_seed(0)
    x, y = torch.randn(64 * 16, 8), torch.randint(0, 3, (64 * 16,))
    val = TensorDataset(x[41 * 16:49 * 16].clone(), y[41 * 16:49 * 16].clone())
    look = _Look()
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    result = trainwell.fit(model, DataLoader(TensorDataset(x, y), batch_size=16), val, epochs=1, progress=False,
                           device="cpu", doctor=True, callbacks=[look])
    assert all(by_loop for step, _, by_loop, _ in look.seen if 42 <= step < 49)
    assert "split-leakage" in [f.id for f in result.findings]


def test_a_loop_step_that_fails_is_said_and_training_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Session, *args: Any) -> None:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(Session, "_top_call", broken)
    torch.manual_seed(0)
    x, y = torch.randn(320, 8), torch.randint(0, 3, (320,))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    look = _Look()
    result = trainwell.fit(model, DataLoader(TensorDataset(x, y), batch_size=16), epochs=1, progress=False,
                           device="cpu", doctor=True, callbacks=[look])
    assert look.session is not None and len(look.seen) == 20
    assert any("loop_step" in e for e in look.session.internal_errors), look.session.internal_errors
    assert result.history[-1]["train_loss"] > 0


class _Idle(Callback):
    """Notes, after each step between windows, whether the session leaves the loop's calls unrecorded
    (``Session._fed_skips``), how many calls it holds and whether the step's loss was finite."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, bool, int, bool]] = []

    def on_train_batch_end(self, trainer: Any, loss: Any) -> None:
        session = next(c for c in trainer.callbacks if isinstance(c, DoctorCallback)).session
        assert session is not None
        if trainer.step_watch is not None:
            self.seen.append((trainer.state.step, session._fed_skips is not None, len(session._fed),
                              math.isfinite(float(loss))))


def test_once_no_check_needs_them_the_loops_calls_go_unrecorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the training data came round again (split-leakage knows it) with finite losses (nonfinite-input needs
    no sums), the loop's calls between windows are not kept until the next window: the same losses, counts and
    findings as the run with the wrappers on every step, holding no batch of those steps."""
    def run(reports: bool, callbacks: list[Callback]) -> Session:
        if not reports:
            monkeypatch.setattr(Session, "loop_reports", lambda self, switch, dataset: None)
        torch.manual_seed(0)
        x, y = torch.randn(4096 + 256, 8), torch.randint(0, 3, (4096 + 256,))  # 64 steps an epoch
        look = _Look()
        trainwell.fit(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)),
                      DataLoader(TensorDataset(x[:4096], y[:4096]), batch_size=64, shuffle=True),
                      TensorDataset(x[4096:], y[4096:]), epochs=5, progress=False, device="cpu", doctor=True,
                      callbacks=[look, *callbacks])
        monkeypatch.undo()
        assert look.session is not None
        return look.session

    idle = _Idle()
    mine, theirs = _records(run(True, [idle])), _records(run(False, []))
    assert mine.pop("fed") == 0 and {k: v for k, v in theirs.items() if k != "fed"} == mine
    # (the one call held is that of the step after the window, which the model-call reports record)
    late = [(step, skipping, held) for step, skipping, held, _ in idle.seen if step > 200]
    assert late and all(skipping and held <= 1 for _, skipping, held in late), late[::8]


class _Spoiled(TensorDataset):
    """A dataset whose row 7 reads as NaN from its ``after``-th read on (a file that goes bad mid-run)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, after: int) -> None:
        super().__init__(x, y)
        self.reads, self.after = 0, after

    def __getitem__(self, i: Any) -> Any:
        self.reads += 1
        x, y = super().__getitem__(i)
        if self.reads > self.after and i == 7:
            x = torch.full_like(x, float("nan"))
        return x, y


def test_a_nan_batch_after_the_calls_go_unrecorded_is_still_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch whose loss is not finite is recorded even while the loop's calls go unrecorded: a NaN that first
    comes in the fifth epoch, long after, is nonfinite-input."""
    torch.manual_seed(0)
    x, y = torch.randn(4096, 8), torch.randint(0, 3, (4096,))  # 64 steps an epoch
    data = _Spoiled(x, y, after=4 * 4096)
    idle = _Idle()
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    result = trainwell.fit(model, DataLoader(data, batch_size=64, shuffle=True), epochs=6, progress=False,
                           device="cpu", doctor=True, callbacks=[idle])
    assert any(skipping for step, skipping, _, _ in idle.seen if step <= 256)  # (the fifth epoch begins after step 256)
    # Steps with a NaN loss taken while the calls went unrecorded were recorded: the calls held grew.
    grew = [b[0] for a, b in zip(idle.seen, idle.seen[1:]) if b[0] == a[0] + 1 and a[1] and not b[3] and b[2] > a[2]]
    assert grew, idle.seen[-70:]
    assert "nonfinite-input" in [f.id for f in result.findings]


def test_a_check_that_fails_to_say_whether_it_skips_calls_is_said_and_they_are_recorded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``Check.skips_fed`` raising is an internal error, said once; the loop's calls are then recorded."""
    from trainwell.doctor.checks.leakage import SplitLeakage

    def broken(self: Any, module: Any) -> bool:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(SplitLeakage, "skips_fed", broken)
    monkeypatch.setattr(SplitLeakage, "needs_fed", lambda self: False)  # (asked only after a hand-over none needed)
    idle = _Idle()
    look = _Look()
    torch.manual_seed(0)
    x, y = torch.randn(4096, 8), torch.randint(0, 3, (4096,))
    trainwell.fit(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)),
                  DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True), epochs=3, progress=False,
                  device="cpu", doctor=True, callbacks=[look, idle])
    assert look.session is not None
    errors = [e for e in look.session.internal_errors if "skips_fed" in e]
    assert len(errors) == 1 and "broken on purpose" in errors[0], look.session.internal_errors
    assert max(held for step, _, held, _ in idle.seen if step > 150) > 1  # (recorded: held until the next window)
