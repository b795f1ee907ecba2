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


def test_a_training_step_between_windows_makes_no_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every check on, a plain step between windows (one model call, one backward(), one step) reaches no
    handler: its training call is recorded for ``on_fed`` and handed over when the next window opens."""
    dispatched: list[tuple[int, str]] = []
    original = Session._dispatch

    def counted(self: Session, method: str, *args: Any, **kwargs: Any) -> None:
        if not self.in_window:
            dispatched.append((self.step, method))
        original(self, method, *args, **kwargs)

    monkeypatch.setattr(Session, "_dispatch", counted)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(256, 8), torch.randint(0, 3, (256,))
    session = Session()
    with session:
        for step in range(700):
            i = step % 8 * 32
            opt.zero_grad()
            F.cross_entropy(model(x[i:i + 32]), y[i:i + 32]).backward()
            opt.step()
        session.end()
    assert session.internal_errors == []
    late = [(s, m) for s, m in dispatched if 200 < s < 700]
    assert late and {m for _, m in late} == {"on_fed"}, sorted({m for _, m in late})
    # Handed over as a window opens, once per window; none once split-leakage knows the training set (a read-back of
    # 1,000 rows or more, almost none of them new: here the first window past step 250, which gets 49 calls).
    steps = [s for s, _ in late]
    assert all(Session.sampled_at(s) for s in steps) and len(steps) == len(set(steps)), steps
    assert steps == [225, 250, 300]


def test_a_nan_batch_in_a_reused_buffer_between_windows_is_found() -> None:
    """Inputs copied into one buffer each step (changed in place after each call): once that is seen, each call is
    handed over as it is made, so NaN rows that first come far from a window are still seen as they were fed."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(256, 8), torch.randint(0, 3, (256,))
    buffer = torch.empty(32, 8)
    session = Session(checks=["nonfinite-input"])
    with session:
        for step in range(760):
            if step == 637:  # far from a window (600 and 601, 700 and 701): the data's 6th batch gets a NaN
                x[5 * 32 + 1, 1] = float("nan")
            i = step % 8 * 32
            buffer.copy_(x[i:i + 32])
            opt.zero_grad()
            F.cross_entropy(model(buffer), y[i:i + 32]).backward()
            opt.step()
        session.end()
    assert [f.id for f in session.findings] == ["nonfinite-input"]
    assert session.nonfinite_data


def test_weights_made_anew_between_windows_are_found() -> None:
    """An optimizer made over new tensors on every iteration, starting far from a window: each one's first step
    reaches ``params-recreated`` (the session tells an optimizer's first step) although no window is open."""
    torch.manual_seed(0)
    x = torch.randn(64, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
    w = torch.zeros(4, 1, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.01)
    session = Session(checks=["params-recreated"])
    with session:
        for step in range(640):
            if step >= 603:  # the bug begins after the window of steps 600 and 601
                w = torch.zeros(4, 1, requires_grad=True)
                opt = torch.optim.SGD([w], lr=0.01)
            opt.zero_grad()
            ((x @ w - y) ** 2).mean().backward()
            opt.step()
        session.end()
        assert session.step < 700  # (no window was open after step 601)
    assert [f.id for f in session.findings] == ["params-recreated"]


def test_next_sampled_is_the_first_step_sampled_at_samples() -> None:
    for step in range(3000):
        ahead = step + 1
        while not Session.sampled_at(ahead):
            ahead += 1
        assert Session.next_sampled(step) == ahead, step


def _pre_hook_on(session: Session) -> bool:
    return any(getattr(h, "__self__", None) is session for h in optimizer_hooks._global_optimizer_pre_hooks.values())


def test_between_windows_the_step_pre_hook_is_on_only_until_a_new_optimizer_has_stepped() -> None:
    """``params-recreated`` acts on each optimizer's first step: an optimizer made between windows turns the step
    pre-hook on for that step, and it goes off again after it (between windows it costs a call every step)."""
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 4), torch.randn(16, 1)

    def step(optimizer: torch.optim.Optimizer) -> None:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

    session = Session(checks=["params-recreated"])
    with session:
        for _ in range(13):
            step(opt)
        assert not session.in_window and not _pre_hook_on(session)
        second = torch.optim.SGD(model.parameters(), lr=0.01)
        assert _pre_hook_on(session)
        step(second)
        assert not session.in_window and not _pre_hook_on(session)
        step(opt)
        assert not _pre_hook_on(session)
    assert not _pre_hook_on(session)


def _sliced_run(steps: int, *, nan_at: int | None = None, skip_nonfinite: bool = False) -> Session:
    """``steps`` steps over 8 batches sliced from one tensor, watched by ``nonfinite-input``; from step ``nan_at``
    the 6th batch holds a NaN. ``skip_nonfinite``: the script skips backward() for a non-finite loss, so no loss
    shows the NaN."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(256, 8), torch.randint(0, 3, (256,))
    session = Session(checks=["nonfinite-input"])
    with session:
        for step in range(steps):
            if step == nan_at:
                x[5 * 32 + 1, 1] = float("nan")
            i = step % 8 * 32
            opt.zero_grad()
            loss = F.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
            if skip_nonfinite and not torch.isfinite(loss):
                continue
            loss.backward()
            opt.step()
        session.end()
    return session


@pytest.mark.parametrize("skip_nonfinite", [False, True])
def test_a_nan_batch_between_windows_is_found_with_or_without_its_loss(skip_nonfinite: bool) -> None:
    """Between windows the inputs are summed only when the losses cannot vouch for them (a non-finite loss, or a
    model call with no backward() of its own, as when the script skips a bad batch's loss). The NaN first comes
    at step 637, far from a window."""
    session = _sliced_run(760, nan_at=637, skip_nonfinite=skip_nonfinite)
    assert session.internal_errors == []
    assert [f.id for f in session.findings] == ["nonfinite-input"]


def test_finite_losses_vouch_for_the_inputs_between_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose every loss is finite and follows one model call: the inputs fed between windows are not summed
    (each window's hand-over is vouched for by the losses), and nothing is found."""
    from trainwell.doctor.checks.inputs import NonfiniteInput

    summed: list[int] = []
    original = NonfiniteInput._sum_kept

    def counted(self: NonfiniteInput) -> None:
        summed.append(len(self.kept))
        original(self)

    monkeypatch.setattr(NonfiniteInput, "_sum_kept", counted)
    session = _sliced_run(300)
    assert session.findings == [] and session.internal_errors == []
    assert sum(summed) == 0, summed


class _Outer(nn.Module):
    """A model whose forward calls another model: held as a submodule, or (``held=False``) reached from outside."""

    def __init__(self, inner: nn.Module, held: bool) -> None:
        super().__init__()
        self.head = nn.Linear(16, 3)
        if held:
            self.inner = inner
        self._reach = (inner,)  # (a tuple: not registered as a submodule)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self._reach[0](x)))


def _train_nested(held: bool) -> tuple[Session, nn.Module, nn.Module, list[int]]:
    """40 steps of a model that runs another inside its forward; the inner one is also called on its own (with
    gradients on, as a pretext task would, its loss added to the step's): each step makes two top-level calls.
    Also returns the top-level calls the session counted before each backward()."""
    torch.manual_seed(0)
    inner = nn.Linear(8, 16)
    outer = _Outer(inner, held)
    params = list({id(p): p for p in [*outer.parameters(), *inner.parameters()]}.values())
    opt = torch.optim.SGD(params, lr=0.01)
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    session = Session(checks=[])
    counted = []
    with session:
        for _ in range(40):
            opt.zero_grad()
            loss = F.cross_entropy(outer(x), y) + inner(x).pow(2).mean() * 1e-3
            counted.append(session.calls_since_backward)
            loss.backward()
            opt.step()
        session.end()
    return session, outer, inner, counted


def test_between_windows_a_model_carries_one_hook() -> None:
    """A model that runs inside no other watched model gets a forward hook alone (the pre-hook is only needed to
    tell an inner call from an outer one)."""
    session = Session(checks=[])
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    hooks = []
    with session:
        for _ in range(15):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            hooks.append((len(model._forward_pre_hooks), len(model._forward_hooks)))
        assert session.calls_since_backward == 0 and session.shared_backwards == 0  # one call, one backward()
    assert hooks[-1] == (0, 1) and not session._nesting
    assert not model._forward_hooks  # (taken off at the end)


@pytest.mark.parametrize("held", [True, False], ids=["held", "reached"])
def test_nested_models_get_pre_hooks_and_count_only_outer_calls(held: bool) -> None:
    """A model that runs inside another's forward (a submodule of it, or one it reaches from outside, seen running
    nested in a window) gives both models a pre-hook: between windows the inner call inside the outer one is not
    a top-level call, so each backward() follows the two top-level calls it did in the windows too."""
    session, outer, inner, counted = _train_nested(held)
    assert session._nesting
    assert len(outer._forward_pre_hooks) == len(inner._forward_pre_hooks) == 0  # (taken off at the end)
    # Every backward() followed two top-level calls (outer, then inner on its own), in windows and between them.
    assert counted == [2] * 40


def test_in_trainwells_loop_evaluation_wrappers_are_in_place_only_while_it_evaluates() -> None:
    """Trainwell's loop says when it evaluates (``Session.evaluating``): between windows its training steps run the
    library's own loss function, and its evaluation passes the watched one, which the evaluation-loss handlers
    (``overfitting``, ``softmax-before-cross-entropy``) need. A script's session keeps it in place throughout."""
    original = F.cross_entropy
    for in_trainer in (True, False):
        session = Session(checks=["overfitting", "softmax-before-cross-entropy"], in_trainer=in_trainer)
        seen = []
        with session:
            _steps(session, 15, lambda step: None)  # past the first ten steps: between windows
            assert not session.in_window
            seen.append(F.cross_entropy is original)
            session.evaluating(True)
            seen.append(F.cross_entropy is original)
            session.evaluating(False)
            seen.append(F.cross_entropy is original)
        assert seen == ([True, False, True] if in_trainer else [False, False, False]), in_trainer
    assert F.cross_entropy is original


def test_between_windows_a_loss_function_only_evaluation_needs_is_its_lean_form() -> None:
    """Where only calls with gradients off have a loss handler between windows, the loss function in place is the
    watched one's evaluation-only form, which returns from a training call before anything else; in windows, and
    once a handler acts on every step, the full one is back."""
    original = F.cross_entropy
    session = Session(checks=["overfitting", "softmax-before-cross-entropy"])
    forms: dict[int, Any] = {}
    with session:
        full = F.cross_entropy
        _steps(session, 35, lambda step: forms.__setitem__(step, F.cross_entropy))
        lean = F.cross_entropy
        assert not session.in_window and lean not in (original, full)
        assert lean.__wrapped__ is original and lean.__name__ == "cross_entropy"
        session.every_call(session.checks[1], "on_loss")  # a handler on every step: the full wrapper
        assert F.cross_entropy is full
        session.every_call(session.checks[1], "on_loss", on=False)
        assert F.cross_entropy is lean
    assert F.cross_entropy is original
    for step, form in forms.items():
        assert form is (full if _in_window(step) else lean), step


def test_steps_of_two_optimizers_taking_turns_are_all_counted_between_windows() -> None:
    """A step post-hook that only counts the steps of the optimizer that stepped before (``_coasting``) still
    counts every step, and tells the optimizers apart, when two of them take turns (a GAN's two players)."""
    torch.manual_seed(0)
    g, d = nn.Linear(4, 4), nn.Linear(4, 1)
    opt_g, opt_d = torch.optim.SGD(g.parameters(), lr=0.01), torch.optim.SGD(d.parameters(), lr=0.01)
    z = torch.randn(8, 4)
    session = Session(checks=[])
    with session:
        for i in range(300):
            for opt, loss in ((opt_d, lambda: d(g(z).detach()).mean()), (opt_g, lambda: -d(g(z)).mean())):
                opt.zero_grad()
                loss().backward()
                opt.step()
                # (steps in a row of the optimizer that just stepped, and of the one before it)
                assert (session.steps_in_a_row, session.previous_optimizer_steps) == (1, 1) or session.step == 1
        assert session.step == 600
        assert session.optimizer_count == 2
    solo = Session(checks=[])
    with solo:
        for _ in range(300):
            opt_g.zero_grad()
            (-d(g(z)).mean()).backward()
            opt_g.step()
        assert solo.step == 300 and solo.steps_in_a_row == 300  # one optimizer: all its steps in a row
