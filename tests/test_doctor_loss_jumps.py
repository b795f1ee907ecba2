"""lr-too-high's "never settles" forms: the loss-curve rules (_loss_jumps.unsettled), the class-mix guard
(LabelMix) that keeps label-ordered data out of them, and the guard at work on a real run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch
from sweep_driver import load

from trainwell.doctor.checks._loss_jumps import COUNT, FLOOR, RELAPSES, LabelMix, unsettled
from trainwell.doctor.session import Session

def _settled(n: int = 320, start: float = 2.3, seed: int = 0) -> list[float]:
    """A healthy curve: a quick fall to a low level with batch-to-batch noise of +-30 %."""
    rng = random.Random(seed)
    return [start] + [max(0.05, start * 0.9 ** i) * rng.uniform(0.7, 1.3) for i in range(1, n)]


def test_a_settled_curve_is_quiet() -> None:
    assert unsettled(_settled(), 2.3) is None


def test_frequent_large_jumps_in_the_last_quarter_are_found() -> None:
    losses = _settled()
    n = len(losses)
    for i in range(n - n // 4, n, 6):  # one batch in six jumps to 0.4x the start, several times its level
        losses[i] = 0.4 * 2.3
    found = unsettled(losses, 2.3)
    assert found is not None and found.form == "jumps"
    assert found.count >= COUNT and found.checked == n // 4
    assert found.highest == pytest.approx(0.4 * 2.3)


def test_jumps_below_the_floor_are_one_hard_sample_not_the_rate() -> None:
    # The same number of jumps, each many times its level but under FLOOR x the start: a single
    # misclassified sample in a batch of a nearly fitted model does that.
    losses = [x / 20 for x in _settled()]
    losses[0] = 2.3
    n = len(losses)
    for i in range(n - n // 4, n, 6):
        losses[i] = 0.9 * FLOOR * 2.3
    assert unsettled(losses, 2.3) is None


def test_jumps_back_above_the_start_in_the_second_half_are_a_relapse() -> None:
    losses = _settled()
    n = len(losses)
    for k in range(RELAPSES):
        losses[n // 2 + 10 + 30 * k] = 2.5
    found = unsettled(losses, 2.3)
    assert found is not None and found.form == "relapse" and found.count == RELAPSES
    losses[n // 2 + 10] = 2.0  # one fewer: not enough
    assert unsettled(losses, 2.3) is None


def test_a_loss_that_never_left_its_start_is_no_relapse() -> None:
    # A rate too low, or labels that cannot be learned: the loss hovers around its first value, so half of
    # the second half is above it. None of those is a jump, so none is a relapse.
    rng = random.Random(1)
    losses = [2.3 * rng.uniform(0.97, 1.03) for _ in range(320)]
    assert sum(x > losses[0] for x in losses[160:]) > 50
    assert unsettled(losses, losses[0]) is None


def test_short_and_nonfinite_runs_are_not_judged() -> None:
    losses = _settled()
    n = len(losses)
    for i in range(n - n // 4, n, 6):
        losses[i] = 0.4 * 2.3
    assert unsettled(losses[:150], 2.3) is None  # under MIN_LOSSES
    losses[-1] = float("nan")
    assert unsettled(losses, 2.3) is None


def _batches(labels: torch.Tensor, size: int = 32) -> list[torch.Tensor]:
    return [labels[i:i + size] for i in range(0, len(labels), size)]


def test_label_mix_of_shuffled_and_of_label_ordered_batches() -> None:
    g = torch.Generator().manual_seed(0)
    labels = torch.arange(10).repeat_interleave(100)
    shuffled, ordered = LabelMix(), LabelMix()
    for b in _batches(labels[torch.randperm(len(labels), generator=g)]):
        shuffled.add(b)
    for b in _batches(labels):
        ordered.add(b)
    assert shuffled.mixed() and shuffled.ratio() == pytest.approx(1.0, abs=0.1)
    assert not ordered.mixed() and ordered.ratio() < 0.3


def test_label_mix_needs_class_ids_and_enough_batches() -> None:
    few = LabelMix()
    for b in _batches(torch.randint(0, 10, (100,))):
        few.add(b)
    assert few.ratio() is None  # 4 batches
    soft = LabelMix()
    soft.add(torch.tensor([0.0, 0.3, 1.0]))
    assert soft.off and soft.ratio() is None


@pytest.mark.slow
def test_label_ordered_data_is_not_taken_for_a_high_rate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Digits in label order through a shuffle buffer of 32 at Adam's good rate: each new class makes the loss
    # jump (without the class-mix guard lr-too-high reports it), and data-not-shuffled does not fire yet.
    monkeypatch.chdir(tmp_path)
    sweep = load()
    case = next(s for s in sweep.SWEEPS if s.check == "data-not-shuffled")
    point = sweep.run_sweep(case, (32,))[0]
    assert "lr-too-high" not in point.others


@pytest.mark.parametrize("weight", [None, torch.tensor([1.0, 1.0, 20.0])])
def test_class_weights_switch_the_jumps_off(weight: torch.Tensor | None) -> None:
    # A batch holding a rare, heavily weighted class weighs many times more: its jumps are not the rate's.
    session = Session()
    check = next(c for c in session.checks if c.id == "lr-too-high")
    model = torch.nn.Linear(4, 3)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight)
    with session:
        loss_fn(model(torch.randn(32, 4)), torch.randint(0, 3, (32,))).backward()
    assert check.mix.off is (weight is not None)
