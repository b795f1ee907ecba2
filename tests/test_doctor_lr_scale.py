"""Learning-rate judgements use each optimizer's own scale (Adadelta's 1.0, not Adam's 1e-3), suggest a rate the
run's evidence supports (not flagged again when used), and write the fix in the user's own names (issue 26,
sections 3 and 5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from test_doctor_cases import run_doctor
from torch import nn

from trainwell.doctor.checks._loss_jumps import MIN_BATCHES
from trainwell.doctor.checks.learning_rate import usual_lr
from trainwell.doctor.session import Session

CASES = Path(__file__).parent / "doctor_cases" / "lr-too-high"

pytestmark = pytest.mark.usefixtures("one_thread")


def _unsettled_run(optimizer: torch.optim.Optimizer) -> list[str]:
    """lr-too-high's end-of-run judgement on a loss that keeps jumping in its last quarter (every fifth loss at
    four times its level, a third of the start), with shuffled class batches, under ``optimizer``."""
    session = Session(checks=["lr-too-high"])
    check = session.checks[0]
    n = 200
    losses = [2.3 * 0.97 ** i + 0.2 for i in range(n)]
    losses = [0.8 if i >= 150 and i % 5 == 0 else x for i, x in enumerate(losses)]
    session._losses, session.loss_steps, session.step, session.backward_count = losses, list(range(n)), n, n
    g = torch.Generator().manual_seed(0)
    for _ in range(MIN_BATCHES + 2):
        check.mix.add(torch.randint(0, 10, (64,), generator=g))
    check.first, check.terms, check.top = [2.3], 64, [2.3, 2.3]
    check.opt, check.optimizers = optimizer, {id(optimizer)}
    check.on_end()
    return [f.id for f in session.findings]


def test_a_noisy_end_is_not_blamed_on_an_optimizers_own_default_rate() -> None:
    params = list(nn.Linear(4, 2).parameters())
    assert usual_lr(torch.optim.Adadelta(params)) == 1.0
    assert _unsettled_run(torch.optim.Adadelta(params, lr=1.0)) == []  # its default: the jumps are not the rate's
    assert _unsettled_run(torch.optim.Adam(params, lr=0.04)) == ["lr-too-high"]  # 40x Adam's usual rate


def test_optimizer_scales() -> None:
    params = list(nn.Linear(4, 2).parameters())
    assert usual_lr(torch.optim.LBFGS(params)) == 1.0
    assert usual_lr(torch.optim.Adagrad(params)) == 1e-2
    assert usual_lr(torch.optim.Rprop(params)) == 1e-2
    assert usual_lr(torch.optim.Adam(params)) == 1e-3
    assert usual_lr(torch.optim.SGD(params, lr=0.1)) == 1e-2


def _lr_finding(script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict | None:
    found = {f["id"]: f for f in run_doctor(script, tmp_path, capsys)["findings"]}
    return found.get("lr-too-high")


@pytest.mark.parametrize("name, variable", [("buggy_sgd_rate_five.py", "LEARNING_RATE"), ("buggy.py", "lr")])
def test_the_suggested_rate_is_not_flagged_again(name: str, variable: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    finding = _lr_finding(CASES / name, tmp_path, capsys)
    assert finding is not None
    old, new = finding["evidence"]["lr"], finding["evidence"]["suggested_lr"]
    assert 0 < new < old
    assert f"lr={new:.2g}" in finding["fix"]
    source = (CASES / name).read_text()
    pattern = r"^LEARNING_RATE = [0-9.]+$" if variable == "LEARNING_RATE" else r"lr=1\.0\)"
    replacement = f"LEARNING_RATE = {new!r}" if variable == "LEARNING_RATE" else f"lr={new!r})"
    again = tmp_path / "again.py"
    again.write_text(re.sub(pattern, replacement, source, count=1, flags=re.M))
    assert again.read_text() != source
    assert _lr_finding(again, tmp_path, capsys) is None


@pytest.mark.parametrize("name, call", [
    ("buggy_sgd_rate_five.py", "sgd = torch.optim.SGD(net.parameters(), lr="),
    ("buggy_never_settles.py", "optimizer = torch.optim.Adam(net.parameters(), lr="),
])
def test_the_fix_uses_the_users_names(name: str, call: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    finding = _lr_finding(CASES / name, tmp_path, capsys)
    assert finding is not None and call in finding["fix"]


def test_hand_made_parameters_are_named_as_a_list() -> None:
    from trainwell.doctor.checks._names import UserNames

    w = torch.randn(3, 2, requires_grad=True)
    bias = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([w, bias], lr=0.1)
    import sys
    names = UserNames.of(sys._getframe(), opt)
    assert names == UserNames(optimizer="opt", params="[w, bias]")
