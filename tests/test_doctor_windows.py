"""Watching in windows: a sampled step and the step after it have every wrapper in place; between windows a
wrapper whose event has no every-step handler is taken out (the library's own function runs), and a handler
marked ``@sampled_and_evaluation`` is called there only for calls made with gradients off."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim import optimizer as optimizer_hooks

from trainwell.doctor.checks.softmax_before_ce import SoftmaxBeforeCrossEntropy
from trainwell.doctor.session import Session


def _steps(session: Session, steps: int, look: Any) -> None:
    """``steps`` training steps of a small model; ``look(step)`` before each, an evaluation loss after each."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    for _ in range(steps):
        look(session.step)
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        with torch.no_grad():
            F.cross_entropy(model(x), y)


def _in_window(step: int) -> bool:
    return Session.sampled_at(step) or Session.sampled_at(step - 1)


def test_between_windows_the_wrappers_of_sampled_only_events_are_out() -> None:
    original = F.cross_entropy
    seen: dict[int, tuple[bool, bool]] = {}

    def look(step: int) -> None:
        hooks = optimizer_hooks._global_optimizer_pre_hooks.values()
        pre_hook = any(getattr(h, "__self__", None) is session for h in hooks)
        seen[step] = (F.cross_entropy is not original, pre_hook)

    session = Session(checks=["saturated-activations", "nonfinite-loss"])  # their handlers: sampled steps only
    with session:
        _steps(session, 60, look)
    assert F.cross_entropy is original and session.step == 60
    for step, (loss_wrapped, pre_hook) in seen.items():
        assert loss_wrapped == pre_hook == _in_window(step), step
    assert not all(w for w, _ in seen.values())


def test_an_evaluation_handler_sees_only_gradient_free_calls_between_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, bool]] = []
    handler = SoftmaxBeforeCrossEntropy.on_loss

    def on_loss(self: SoftmaxBeforeCrossEntropy, ev: Any) -> None:
        calls.append((self.session.step, torch.is_grad_enabled()))
        handler(self, ev)

    on_loss.__dict__.update(handler.__dict__)  # (its marks: sampled steps and evaluation calls)
    monkeypatch.setattr(SoftmaxBeforeCrossEntropy, "on_loss", on_loss)
    original = F.cross_entropy
    wrapped: list[bool] = []
    session = Session(checks=["softmax-before-cross-entropy"])
    with session:
        _steps(session, 60, lambda step: wrapped.append(F.cross_entropy is not original))
    assert all(wrapped)  # an evaluation loss may come on any step: the wrapper stays
    training = {step for step, grad in calls if grad}
    evaluation = [step for step, grad in calls if not grad]
    assert training == {s for s in range(60) if Session.sampled_at(s)}  # training losses: sampled steps alone
    assert len(evaluation) == 60  # one evaluation loss after each step, every one seen
