"""zero-grad-missing judges each optimizer on its own: clearing one optimizer says nothing of another, and
gradients that a later backward() adds to another model's (a GAN's generator loss through its critic) are
harmless when that model is cleared before its own step."""

from __future__ import annotations

import torch
from torch import nn

from trainwell.doctor.session import Session


def _gan(clear: str, steps: int = 8) -> list[tuple[str, str]]:
    """Two models, the second's backward() running through the first. ``clear``: which optimizer the first
    model's update clears ("own", "other" or "none")."""
    torch.manual_seed(0)
    first, second = nn.Linear(3, 1), nn.Linear(2, 3)
    opt_first = torch.optim.SGD(first.parameters(), lr=0.01)
    opt_second = torch.optim.SGD(second.parameters(), lr=0.01)
    session = Session(checks=["zero-grad-missing"])
    with session:
        for _ in range(steps):
            if clear == "own":
                opt_first.zero_grad()
            elif clear == "other":
                opt_second.zero_grad()
            first(torch.randn(4, 3)).pow(2).mean().backward()
            opt_first.step()
            opt_second.zero_grad()
            first(second(torch.randn(4, 2))).mean().backward()  # adds to first's gradients too
            opt_second.step()
        session.end()
    return [(f.id, f.fix) for f in session.findings]


def test_a_later_backward_through_a_cleared_model_is_not_a_missing_zero_grad() -> None:
    assert _gan("own") == []


def test_clearing_the_wrong_optimizer_is_found_and_said() -> None:
    found = _gan("other")
    assert [i for i, _ in found] == ["zero-grad-missing"]
    assert "opt_first.zero_grad()" in found[0][1] and "another optimizer" in found[0][1]


def test_clearing_none_is_found_without_naming_another_optimizer() -> None:
    found = _gan("none")
    assert [i for i, _ in found] == ["zero-grad-missing"]
    assert "another optimizer" not in found[0][1]


def test_old_gradients_that_no_backward_adds_to_are_not_counted() -> None:
    """An optimizer that keeps stepping a model no loss reaches any more: its gradients are stale, not summed."""
    torch.manual_seed(0)
    old, new = nn.Linear(3, 1), nn.Linear(3, 1)
    opt_old = torch.optim.SGD(old.parameters(), lr=0.01)
    opt_new = torch.optim.SGD(new.parameters(), lr=0.01)
    old(torch.randn(4, 3)).sum().backward()  # gradients left on the old model, never cleared
    session = Session(checks=["zero-grad-missing"])
    with session:
        for _ in range(8):
            opt_new.zero_grad()
            new(torch.randn(4, 3)).pow(2).mean().backward()
            opt_new.step()
            opt_old.step()
        session.end()
    assert session.findings == []


def test_a_layer_the_loss_never_reaches_does_not_hide_a_missing_zero_grad() -> None:
    """Its gradient stays None, which once read as "cleared": the optimizer must have none of its gradients left."""
    for clear in (False, True):
        torch.manual_seed(0)
        used, unused = nn.Linear(4, 2), nn.Linear(2, 1)  # unused: the smallest, looked at first
        opt = torch.optim.SGD([*used.parameters(), *unused.parameters()], lr=0.01)
        session = Session(checks=["zero-grad-missing"])
        with session:
            for _ in range(8):
                if clear:
                    opt.zero_grad()
                used(torch.randn(8, 4)).pow(2).mean().backward()
                opt.step()
            session.end()
        assert [f.id for f in session.findings] == ([] if clear else ["zero-grad-missing"])
