"""wrong-loss-for-task on float targets: balanced whole numbers 0..C-1 are class labels turned into floats;
whole numbers with skewed frequencies (ordered scores), fractions, and 0/1 targets are left to the regression."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from trainwell.doctor.session import Session


def _found(targets: torch.Tensor, steps: int = 5, device: str = "cpu") -> dict | None:
    torch.manual_seed(0)
    x, targets = torch.randn(len(targets), 4, device=device), targets.to(device)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    session = Session(checks=["wrong-loss-for-task"])
    with session:
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), targets.unsqueeze(1)).backward()
            opt.step()
    return next((f.evidence for f in session.findings if f.id == "wrong-loss-for-task"), None)


def test_balanced_whole_numbers_from_zero_are_class_labels() -> None:
    labels = torch.arange(4).repeat(30).float()  # 0, 1, 2, 3, 30 times each
    evidence = _found(labels)
    assert evidence is not None and evidence["target_kind"] == "float_ids" and evidence["classes"] == 4


def test_ordered_scores_with_skewed_frequencies_are_regression() -> None:
    # A 0-4 grade where most samples sit in the middle (counts 12, 40, 50, 30, 4).
    grade = torch.tensor([0] * 12 + [1] * 40 + [2] * 50 + [3] * 30 + [4] * 4).float()
    assert _found(grade) is None


def test_fractions_binary_targets_and_labels_from_one_are_left_alone() -> None:
    assert _found(torch.linspace(0, 3, 120)) is None  # continuous targets
    assert _found(torch.arange(2).repeat(60).float()) is None  # 0/1: a probability target is fine with MSE
    assert _found((torch.arange(3).repeat(40) + 1).float()) is None  # 1..3: as likely a 1-3 rating


def test_few_targets_are_not_enough_to_judge() -> None:
    assert _found(torch.arange(3).float(), steps=5) is None  # 15 targets seen in all, under 10 per class


@pytest.mark.cuda
def test_class_labels_and_class_mix_read_from_the_gpu() -> None:
    # Both rules read targets that live on the device: the float class ids of wrong-loss-for-task and
    # lr-too-high's class mix (not run where no GPU was lent; see the closing note).
    from trainwell.doctor.checks._loss_jumps import LabelMix

    evidence = _found(torch.arange(4).repeat(30).float(), device="cuda")
    assert evidence is not None and evidence["target_kind"] == "float_ids"
    mix = LabelMix()
    for _ in range(10):
        mix.add(torch.randperm(320, device="cuda")[:32] % 10)
    assert mix.mixed()
