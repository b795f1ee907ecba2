"""Checks that stop watching every step once they have seen what they need (``Session.relax``): they
still run on sampled steps, and what they find does not change."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn
from torch.utils.data import TensorDataset

from trainwell.doctor.session import Session


def _train(session: Session, x: torch.Tensor, y: torch.Tensor, epochs: int, *, shuffle: bool = True,
           batch: int = 50) -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(x.shape[1], 32), nn.ReLU(), nn.Linear(32, int(y.max()) + 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=g) if shuffle else torch.arange(len(y))
        for i in range(0, len(y), batch):
            idx = order[i:i + batch]
            opt.zero_grad()
            nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
    return model, opt  # (the optimizer too: a model whose optimizer is gone is no longer in training)


def _handlers(session: Session, table: str, method: str) -> set[str]:
    return {c.id for c, _ in getattr(session, table)[method]}


def test_relaxed_handlers_leave_the_every_step_table_only() -> None:
    torch.manual_seed(0)
    x, y = torch.randn(2000, 8), torch.randint(0, 4, (2000,))
    session = Session()
    with session:
        _train(session, x, y, epochs=6)  # 240 steps: past lr-too-high's start and the other relax points
        session.end()
    assert session.internal_errors == []
    every, sampled = _handlers(session, "_every_step", "on_forward"), _handlers(session, "_handlers", "on_forward")
    assert "lr-too-high" not in every and "lr-too-high" in sampled
    assert "labels-off-by-one" not in _handlers(session, "_every_step", "on_loss")
    assert "data-not-shuffled" not in _handlers(session, "_every_step", "on_loss")
    assert "data-not-shuffled" in _handlers(session, "_handlers", "on_loss")
    # A NaN can come in any batch: between windows the training batches still reach it, together (on_fed), and
    # evaluation calls as events; no training call is an event between windows.
    assert "nonfinite-input" in _handlers(session, "_handlers", "on_fed")
    assert "nonfinite-input" in _handlers(session, "_every_step_off", "on_forward")
    assert every == set()
    assert not [f for f in session.findings if f.severity in ("error", "warning")]


def test_split_leakage_still_found_once_the_training_data_repeats() -> None:
    """After an epoch has come round again, training inputs are fingerprinted on sampled steps only; the
    training set is known by then, so an evaluation on training samples at the very end is still found."""
    torch.manual_seed(0)
    x, y = torch.randn(2000, 8), torch.randint(0, 4, (2000,))
    session = Session(checks=["split-leakage"])
    with session:
        model, _opt = _train(session, x, y, epochs=6)
        check = session.checks[0]
        assert check.repeats, "the training data came round again: only sampled steps look at it now"
        with torch.no_grad():
            for i in range(0, 400, 100):
                model(x[i:i + 100])  # "validation" that is the first 400 training samples
        session.end()
    assert [f.id for f in session.findings] == ["split-leakage"]


def test_split_leakage_quiet_on_held_out_data_after_the_training_data_repeats() -> None:
    torch.manual_seed(0)
    x, y = torch.randn(2400, 8), torch.randint(0, 4, (2400,))
    session = Session(checks=["split-leakage"])
    with session:
        model, _opt = _train(session, x[:2000], y[:2000], epochs=6)
        with torch.no_grad():
            for i in range(2000, 2400, 100):
                model(x[i:i + 100])
        session.end()
    assert session.findings == []


def test_data_not_shuffled_still_found_in_a_long_run() -> None:
    """Sorted data never gives mixed batches, so the check keeps watching and reports."""
    torch.manual_seed(0)
    y = torch.arange(4).repeat_interleave(500)
    x = torch.randn(2000, 8) + y[:, None].float()
    session = Session(checks=["data-not-shuffled"])
    with session:
        _train(session, x, y, epochs=6, shuffle=False)
        session.end()
    assert [f.id for f in session.findings] == ["data-not-shuffled"]


def test_inside_fit_the_checks_of_a_loops_own_code_are_off_and_the_rest_on(tmp_path: Path) -> None:
    """trainwell's loop zeroes the gradients, sets the modes and owns its GradScaler: the checks that judge a loop's
    code are off there (they could only ever find trainwell's own bugs, which its tests look for); the checks of
    the data, the model and the optimization run as in any script."""
    import trainwell
    from trainwell.doctor.callback import DoctorCallback, in_trainwells_loop
    from trainwell.doctor.check import CHECKS

    loop_only = {name for name in CHECKS.names() if CHECKS.get(name).loop_only}
    assert {"zero-grad-missing", "eval-mode-missing", "set-epoch-missing", "fp16-without-grad-scaler"} <= loop_only
    assert not loop_only & {"nonfinite-input", "lr-too-high", "split-leakage", "loss-not-decreasing",
                            "dataloader-bottleneck", "data-not-shuffled", "params-not-in-optimizer"}
    seen: list[set[str]] = []

    class Spy(DoctorCallback):
        def on_fit_end(self, trainer):  # type: ignore[no-untyped-def]
            assert self.session is not None
            seen.append({check.id for check in self.session.checks})
            super().on_fit_end(trainer)

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randint(0, 3, (64,)))
    trainwell.fit(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)), data, epochs=1, batch_size=16,
                  progress=False, device="cpu", doctor=False, callbacks=[Spy(show=False)])
    assert seen == [set(in_trainwells_loop())]
    assert "zero-grad-missing" not in seen[0] and {"nonfinite-input", "lr-too-high"} <= seen[0]
