"""The doctor's cheaper paths (fewer calls and tensor ops per step) see what the plain ones saw."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

from trainwell.doctor.checks.dataloader import MIN_WAIT_S
from trainwell.doctor.checks.dead_relu import dead_share
from trainwell.doctor.events import BatchEvent
from trainwell.doctor.session import Session


def _reference_dead_share(out: torch.Tensor) -> float:
    nonzero = out.ne(0)
    if nonzero.ndim > 2:
        nonzero = nonzero.flatten(2).any(dim=2)
    return 1.0 - float(nonzero.any(dim=0).float().mean())


def test_dead_share_counts_units_silent_for_the_whole_batch() -> None:
    torch.manual_seed(0)
    flat = torch.relu(torch.randn(32, 40))
    flat[:, :30] = 0
    flat[5, 3] = float("nan")  # NaN is not zero: that unit is alive (broken, not dead)
    maps = torch.relu(torch.randn(4, 16, 3, 3))
    maps[:, 2:9] = 0
    maps[1, 4, 2, 2] = 0.5  # one position of one sample keeps unit 4 alive
    shifted = torch.relu(torch.randn(32, 40))
    shifted[:, :10] = 0
    shifted[::2, :5] = -1.0  # below zero (a ReLU subclass, a change in place): not silent, so not dead
    for out, dead in ((flat, 29), (maps, 6), (shifted, 5)):
        share, units = dead_share(out)
        assert units == out.shape[1]
        assert share == dead / units == pytest.approx(_reference_dead_share(out))


def _events(check: object, session: Session, waits: list[float]) -> None:
    it = object()  # one iterator: one epoch
    frame = sys._getframe()
    for wait in waits:
        session.backward_count += 1  # a training step between batches
        session.batches += 1  # (the session counts every batch; the check sees those of windows)
        check.on_batch(BatchEvent([torch.zeros(16, 4)], wait, frame, it))  # type: ignore[attr-defined]


def test_dataloader_window_counts_its_slow_batches_as_they_come_and_go() -> None:
    session = Session(checks=["dataloader-bottleneck"])
    check = session.checks[0]
    # A few slow batches at first (a cold disk cache), a long fast stretch, then a slow spell: the first
    # ones leave the 200-batch window, the spell is a tenth of it.
    _events(check, session, [1e-5] + [0.02] * 5 + [1e-5] * 300 + [0.02] * 20)
    (stream,) = check.streams.values()
    # The window holds the latest 200 intervals: the first slow batches have left it, the spell is a tenth of it.
    assert len(stream.waits) == 200 and stream.slow == sum(w >= MIN_WAIT_S for w in stream.waits) == 20
    assert not check.reported  # a tenth of the window waited: not a starved loop
    assert len(stream.items) == 25 and set(stream.items) == {16}  # the sizes of the batches that waited only


def test_dataloader_interval_needs_the_batch_just_before() -> None:
    """Only window batches are timed: from a window's last batch to the next window's first, other batches went by
    unseen, and that span is no batch-to-batch interval."""
    session = Session(checks=["dataloader-bottleneck"])
    check = session.checks[0]
    _events(check, session, [1e-5, 1e-5])  # a window: one interval
    session.batches += 50  # fifty batches between windows
    _events(check, session, [1e-5, 1e-5])  # the next window: its first batch starts an interval again
    (stream,) = check.streams.values()
    assert len(stream.intervals) == 2


class _Rows(torch.utils.data.Dataset):  # type: ignore[type-arg]
    def __init__(self, load_s: float) -> None:
        self.load_s = load_s

    def __len__(self) -> int:
        return 960

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self.load_s:
            import time

            time.sleep(self.load_s)
        return torch.ones(4) * (i % 7), torch.tensor(i % 2)


def _train_watched(load_s: float) -> tuple[Session, list[int]]:
    """60 steps over a loader taking ``load_s`` a row; the session's count of each batch the check timed."""
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    session = Session(checks=["dataloader-bottleneck"])
    timed: list[int] = []
    check = session.checks[0]
    original = check._timed
    check._timed = lambda s, it, batch, *rest: (timed.append(batch), original(s, it, batch, *rest))  # type: ignore[method-assign]
    with session:
        for x, y in torch.utils.data.DataLoader(_Rows(load_s), batch_size=16):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        session.end()
    return session, timed


def test_dataloader_bottleneck_times_window_batches_alone() -> None:
    """The batches of windows are timed (the first ten steps, then each sampled step's and the next one's:
    batch n is step n - 1's), and the steps between windows time nothing; a starved loop is told from them."""
    session, timed = _train_watched(0.0)
    assert timed == [*range(1, 13), 21, 22, 31, 32, 41, 42, 51, 52]
    assert session.findings == []
    session, timed = _train_watched(0.0006)  # 16 rows a batch: about 10 ms of loading a step
    assert [f.id for f in session.findings] == ["dataloader-bottleneck"]


def test_dataloader_bottleneck_still_said_after_a_few_slow_batches() -> None:
    session = Session(checks=["dataloader-bottleneck"])
    check = session.checks[0]
    _events(check, session, [0.02] * 12)
    assert check.reported  # every interval waited 20 ms: said at the first judgement (8 intervals)
    assert [f.id for f in session.findings] == ["dataloader-bottleneck"]


def test_split_leakage_counts_training_after_an_evaluation_as_no_leak() -> None:
    """Samples first evaluated and only later trained on (pseudo-labels, a policy's states) are no leak,
    also when both happen between two sampled steps and are fingerprinted together."""
    torch.manual_seed(0)
    x, y = torch.randn(400, 8), torch.randint(0, 4, (400,))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def train(rows: slice) -> None:
        for i in range(rows.start, rows.stop, 20):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x[i:i + 20]), y[i:i + 20]).backward()
            opt.step()

    session = Session(checks=["split-leakage"])
    with session:
        train(slice(0, 240))  # 12 steps: past the first ten, which are all sampled
        assert not session.sampled
        with torch.no_grad():
            for i in range(240, 400, 40):
                model(x[i:i + 40])  # evaluated first...
        train(slice(240, 400))  # ...then trained on: steps 12 to 19, none sampled
        session.end()
    assert session.findings == []
    with Session(checks=["split-leakage"]) as later:  # the same samples evaluated after training: a leak
        train(slice(0, 400))
        with torch.no_grad():
            for i in range(240, 400, 40):
                model(x[i:i + 40].clone())  # (a copy: a held-out set; a slice of x would be x's own rows)
        later.end()
    assert [f.id for f in later.findings] == ["split-leakage"]


def test_nonfinite_input_in_a_batch_of_another_shape_on_a_step_not_sampled() -> None:
    """Kept batches are summed per sample shape (sequences of several lengths); a NaN in any of them is found."""
    torch.manual_seed(0)
    rnn = nn.GRU(3, 8, batch_first=True)
    head = nn.Linear(8, 1)
    opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.01)
    session = Session(checks=["nonfinite-input"])
    with session:
        for step in range(40):
            x = torch.randn(4, 5 + step % 3, 3)  # three sequence lengths
            if step == 13:  # a step that is not sampled
                x[2, 1, 0] = float("nan")
            out, _ = rnn(x)
            loss = head(torch.nan_to_num(out[:, -1])).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        session.end()
    assert session.nonfinite_data


def test_losses_are_copies_the_script_cannot_change_later() -> None:
    """A loss changed in place after backward() without a version bump (``.data``, an all_reduce for logging)
    is still read back as it was; a loss sliced out of a bigger tensor does not keep that tensor's storage (on
    the CPU a loss is read at once: nothing of the tensor is kept)."""
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    session = Session(checks=[])
    with session:
        seen = []
        for _ in range(4):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen.append(loss.item())
            loss.data.mul_(100)  # no version bump
        per_output = model(torch.randn(8, 4)).pow(2).mean(0)
        opt.zero_grad()
        per_output[1].backward()
        assert session._pending_losses == []
        losses = session.losses
    assert losses == seen + [per_output[1].item()]
    assert session.loss_steps == [0, 1, 2, 3, 4]


def _classifier(lr: float) -> tuple[Callable[[int], None], torch.optim.Optimizer]:
    """A small classifier and its SGD optimizer; ``step(i)`` trains on the i-th of 8 batches of 32."""
    torch.manual_seed(0)
    x, y = torch.randn(256, 6), torch.randint(0, 3, (256,))
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def step(i: int) -> None:
        i = i % 8 * 32
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32]).backward()
        opt.step()

    return step, opt


def test_params_not_updating_looks_at_sampled_steps_and_the_step_after_only() -> None:
    train_step, _ = _classifier(lr=0.0)  # a learning rate of 0: nothing ever moves
    session = Session(checks=["params-not-updating"])
    check = session.checks[0]
    calls: list[int] = []
    watched = check.on_step_pre

    def counted(ev: object) -> None:
        calls.append(session.step)
        watched(ev)  # type: ignore[arg-type]

    for table in (session._handlers, session._after_sampled):
        table["on_step_pre"] = [(check, counted)]
    assert session._every_step["on_step_pre"] == []
    with session:
        for step in range(60):
            train_step(step)
        session.end()
    assert calls == [*range(0, 12), 20, 21, 30, 31, 40, 41, 50, 51]
    assert [f.id for f in session.findings] == ["params-not-updating"]


class _FunctionalNet(nn.Module):
    """ReLUs called as functions in forward(), the second layer's units all pushed below zero."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b, self.out = nn.Linear(8, 32), nn.Linear(32, 32), nn.Linear(32, 4)
        with torch.no_grad():
            self.b.bias.fill_(-50.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.b(nn.functional.relu(self.a(x)))))


def test_each_relu_is_measured_once_and_numbered_by_its_place() -> None:
    """F.relu calls torch.relu, and nn.ReLU calls F.relu: each ReLU output is one entry, so the dead layer of a
    model with functional ReLUs (or with nn.ReLU modules) is named by its place, the second, and no output is
    measured twice. (A model mixing both is numbered modules first.)"""
    torch.manual_seed(0)
    seen: list[tuple[int, int]] = []
    for model in (_FunctionalNet(), nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                                                   nn.Linear(32, 4))):
        if isinstance(model, nn.Sequential):
            with torch.no_grad():
                model[2].bias.fill_(-50.0)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        session = Session(checks=["dead-relu"])
        check = session.checks[0]
        watched = check.on_forward

        def counted(ev: object, watched: object = watched) -> None:
            relus = sum(isinstance(m, nn.ReLU) for m, _, _ in ev.leaf_calls)  # type: ignore[attr-defined]
            seen.append((relus, len(ev.functional_relus)))  # type: ignore[attr-defined]
            watched(ev)  # type: ignore[operator]

        session._handlers["on_forward"] = [(check, counted)]
        with session:
            for _ in range(30):
                opt.zero_grad()
                nn.functional.cross_entropy(model(torch.randn(64, 8)), torch.randint(0, 4, (64,))).backward()
                opt.step()
            session.end()
        assert [f.evidence["relu_index"] for f in session.findings] == [2]
    assert set(seen[:10]) == {(0, 2)} and set(seen[-10:]) == {(2, 0)}


def _foreach_norm_calls(monkeypatch: pytest.MonkeyPatch, note: Callable[[list[torch.Tensor]], Any]) -> list[Any]:
    """What ``note`` says of the tensors of each ``torch._foreach_norm`` call from now on (the op still runs)."""
    seen: list[Any] = []
    foreach_norm = torch._foreach_norm

    def noted(tensors: list[torch.Tensor], *args: object, **kwargs: object) -> object:
        seen.append(note(tensors))
        return foreach_norm(tensors, *args, **kwargs)

    monkeypatch.setattr(torch, "_foreach_norm", noted)
    return seen


def test_norms_and_relative_changes_match_one_op_per_tensor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared foreach helpers give each tensor's own norm, also for float16 (computed in float32, past
    float16's range) and float64 (not foreach-able in float32: one op each)."""
    from trainwell.doctor.checks._grads import change_norms, norms, relative_changes

    foreach_calls = _foreach_norm_calls(monkeypatch, len)
    torch.manual_seed(0)
    ts = [torch.randn(40, 30), torch.full((100,), 3000.0, dtype=torch.float16), torch.randn(7, dtype=torch.float64),
          torch.randn(5).to(torch.bfloat16)]
    expected = [float(t.float().norm()) for t in ts]
    assert norms(ts) == pytest.approx(expected, rel=1e-5)
    assert foreach_calls == []  # float64 in the list: one op each
    # The foreach path (all foreach-able dtypes), float16 whose squares pass 65,504: summed in float32.
    assert norms(ts[:2]) == pytest.approx(expected[:2], rel=1e-5)
    assert foreach_calls == [2]
    params = [nn.Parameter(t.clone().float()) for t in ts]
    for p in params:
        p.grad = p.detach() * 2
    before = [(p, p.detach().clone()) for p in params]
    with torch.no_grad():
        for i, p in enumerate(params):
            p.mul_(1 + 0.1 * (i + 1))
    assert relative_changes(before) == pytest.approx([0.1 * (i + 1) for i in range(len(params))], rel=1e-4)
    assert change_norms(before) == pytest.approx([0.1 * (i + 1) * float(b.norm()) for i, (_, b) in enumerate(before)],
                                                 rel=1e-4)
    assert relative_changes([]) == [] and norms([]) == []
    foreach_calls.clear()
    assert norms([torch.zeros(0), torch.full((4,), 2.0)]) == [0.0, 4.0]  # an empty tensor: one op each
    assert foreach_calls == []


def test_params_not_updating_stops_copying_once_the_weights_moved() -> None:
    """An optimizer seen updating its weights is never this bug again (what stops later converged): no more
    copies or comparisons for it."""
    train_step, opt = _classifier(lr=0.1)
    session = Session(checks=["params-not-updating"])
    check = session.checks[0]
    with session:
        for step in range(40):
            train_step(step)
            if step == 2:
                assert opt in check.moved
            if step >= 2:
                assert not check.snaps and not check.unread and check.snapped == 0
        session.end()
    assert session.findings == []


class _GatedReLU(nn.ReLU):
    """An nn.ReLU with a layer of its own: not a leaf, so its F.relu output is the only record of it."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.relu(x) * torch.sigmoid(self.gate(x))


def test_a_relu_module_with_children_is_still_measured() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), _GatedReLU(), nn.Linear(32, 4))
    session = Session(checks=["dead-relu"])
    seen: list[int] = []
    check = session.checks[0]
    watched = check.on_forward

    def counted(ev: object) -> None:
        seen.append(len(ev.functional_relus))  # type: ignore[attr-defined]
        watched(ev)  # type: ignore[arg-type]

    session._handlers["on_forward"] = [(check, counted)]
    with session:
        model(torch.randn(16, 8))
    assert seen == [1]


def _tabular_run(x: torch.Tensor) -> Session:
    """A small classifier trained on the rows of ``x`` for 30 steps, watched by uncentered-input alone."""
    torch.manual_seed(0)
    y = torch.randint(0, 3, (x.shape[0],))
    model = nn.Sequential(nn.Linear(x.shape[1], 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    session = Session(checks=["uncentered-input"])
    with session:
        for step in range(30):
            i = (step * 16) % x.shape[0]
            opt.zero_grad()
            nn.functional.cross_entropy(model(x[i:i + 16]), y[i:i + 16]).backward()
            opt.step()
        session.end()
    return session


def test_uncentered_input_names_the_columns_far_from_zero() -> None:
    """Columns whose mean sits many standard deviations from zero (raw ages, prices) are reported with the worst
    one's figures; standardized columns are not, and neither are 0/1 flags, which sit off zero by design."""
    g = torch.Generator().manual_seed(0)
    raw = torch.randn(480, 4, generator=g) * torch.tensor([1.0, 5.0, 2.0, 0.5]) + torch.tensor([40.0, 100.0, 30.0, 9.0])
    flags = (torch.rand(480, 3, generator=g) > 0.5).float()
    found = _tabular_run(torch.cat([raw, flags], 1)).findings
    assert [f.id for f in found] == ["uncentered-input"]
    evidence = found[0].evidence
    assert evidence["columns"] == 4 and evidence["offset_columns"] == 4  # the flags are not counted
    assert evidence["column"] == 0 and 30 < evidence["largest_offset"] < 50  # age-like: mean 40, spread 1
    assert 39 < evidence["column_mean"] < 41 and 0.8 < evidence["column_std"] < 1.2
    standardized = (raw - raw.mean(0)) / raw.std(0)
    assert _tabular_run(torch.cat([standardized, flags], 1)).findings == []


def test_label_mix_counts_classes_and_turns_away_targets_that_are_not_class_ids() -> None:
    """The learning-rate check's record of the classes in training batches: counted in Python for a batch, with
    torch.unique for a huge one; NaN, fractional and negative targets switch it off (NaN used to raise)."""
    from trainwell.doctor.checks._loss_jumps import LabelMix

    mix = LabelMix()
    mix.add(torch.tensor([0, 2, 2, 5]))
    mix.add(torch.tensor([1.0, 1.0, 0.0]))
    big = torch.arange(20000) % 7
    mix.add(big)
    assert mix.distinct == [3, 2, 7] and mix.sizes == [4, 3, 20000] and not mix.off
    assert mix.counts[2] == 2 + 20000 // 7 and mix.counts[0] == 1 + 1 + 2858 and mix.counts[5] == 1 + 2857
    for bad in ([0.0, float("nan")], [0.5, 1.0], [-1, 2], [float("inf")]):
        other = LabelMix()
        other.add(torch.tensor(bad))
        assert other.off and other.distinct == []


def test_a_steps_gradient_norms_are_worked_out_once_for_every_check_that_reads_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """exploding-gradients, vanishing-gradients and lr-too-low read the gradient norms of the stepping optimizer's
    parameters on a sampled step: one foreach op (one wait on a GPU) on the step event, shared, not one per check.
    A parameter without a gradient has none; the values are each gradient's own norm."""
    from trainwell.doctor.checks._grads import step_grad_norms
    from trainwell.doctor.events import StepEvent

    torch.manual_seed(0)
    params = [nn.Parameter(torch.randn(6, 4)), nn.Parameter(torch.randn(4)), nn.Parameter(torch.randn(3, 3))]
    params[0].grad, params[1].grad = torch.randn(6, 4), torch.randn(4)
    opt = torch.optim.SGD(params, lr=0.1)
    calls = _foreach_norm_calls(monkeypatch, len)
    ev = StepEvent(opt, None)
    found = step_grad_norms(ev)
    assert step_grad_norms(ev) is found and calls == [2]
    assert list(found) == [id(params[0]), id(params[1])]
    assert found[id(params[0])] == pytest.approx(float(params[0].grad.norm()), rel=1e-6)
    assert found[id(params[1])] == pytest.approx(float(params[1].grad.norm()), rel=1e-6)
    with Session(checks=["exploding-gradients", "vanishing-gradients", "lr-too-low"]) as session:
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))
        sgd = torch.optim.SGD(model.parameters(), lr=0.01)
        read = _foreach_norm_calls(monkeypatch, lambda ts: {t.data_ptr() for t in ts})  # the tensors' storage
        for _ in range(3):  # sampled steps, all of them
            sgd.zero_grad()
            nn.functional.cross_entropy(model(torch.randn(32, 8)), torch.randint(0, 3, (32,))).backward()
            grads = {p.grad.data_ptr() for p in model.parameters()}
            read.clear()
            sgd.step()
            # Every gradient's norm was read once on this step, by one call for the three checks (it used to be
            # read by each of them: three times for some).
            assert [len(grads & r) for r in read if grads & r] == [6]
        session.end()
    assert session.internal_errors == []
