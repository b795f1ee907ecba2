"""The doctor's own failures: recorded and said, never breaking the run, never leaving patches behind."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset


def _explode(self, ev):  # type: ignore[no-untyped-def]
    raise RuntimeError("bug in a check")


def test_a_check_that_raises_inside_fit_is_said_and_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import trainwell
    from trainwell.doctor.checks.nonfinite_loss import NonfiniteLoss

    monkeypatch.setattr(NonfiniteLoss, "on_backward_pre", _explode)
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randint(0, 3, (64,)))
    result = trainwell.fit(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)), data, epochs=2,
                           batch_size=16, progress=False, device="cpu", doctor=True, out=tmp_path / "fit")
    assert len(result.history) == 2  # training completed
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "nonfinite-loss" in line]
    assert len(lines) == 1, err  # said once, not once per step
    assert "bug in a check" in lines[0] and "unaffected" in lines[0]
    errors = json.loads((tmp_path / "fit" / "doctor.json").read_text())["internal_errors"]
    assert errors == ["nonfinite-loss.on_backward_pre: RuntimeError: bug in a check"]


def _broken_wrap(self, fn):  # type: ignore[no-untyped-def]
    raise RuntimeError("install broke")


def _torch_globals() -> dict[str, object]:
    """Everything the doctor patches or hooks process-wide, as it is now."""
    import warnings

    import torch.nn.functional as F
    from torch.nn.modules import module as module_hooks
    from torch.optim import optimizer as optimizer_hooks
    from torch.utils.data import dataloader

    from trainwell.doctor.session import LOSS_FUNCTIONS

    found: dict[str, object] = {f"F.{n}": getattr(F, n) for n in (*LOSS_FUNCTIONS, "relu")}
    found.update({"torch.relu": torch.relu, "Tensor.backward": torch.Tensor.backward,
                  "Optimizer.zero_grad": torch.optim.Optimizer.zero_grad, "Module.zero_grad": nn.Module.zero_grad,
                  "DataLoader.__next__": dataloader._BaseDataLoaderIter.__next__,
                  "warning filters": list(warnings.filters)})
    for name in ("_global_forward_pre_hooks", "_global_forward_hooks"):
        found[name] = list(getattr(module_hooks, name))
    for name in ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks"):
        found[name] = list(getattr(optimizer_hooks, name))
    return found


@pytest.mark.parametrize("failing", ["_wrap_backward", "_wrap_next"])
def test_an_install_that_fails_half_way_undoes_itself(failing: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.doctor.session import Session

    before = _torch_globals()
    monkeypatch.setattr(Session, failing, _broken_wrap)
    session = Session()
    with pytest.raises(RuntimeError, match="install broke"):
        session.install()
    assert _torch_globals() == before
    assert not session._installed


def test_watch_removes_everything_when_the_watched_code_raises() -> None:
    from trainwell import doctor

    before = _torch_globals()
    with pytest.raises(KeyboardInterrupt), doctor.watch(show=False):
        assert _torch_globals() != before  # installed while the block runs
        raise KeyboardInterrupt
    assert _torch_globals() == before


def test_a_failing_callback_at_start_leaves_no_doctor_patches(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.doctor.callback import DoctorCallback
    from trainwell.doctor.session import Session

    before = _torch_globals()
    monkeypatch.setattr(Session, "_wrap_next", _broken_wrap)
    callback = DoctorCallback(show=False)
    trainer: Any = SimpleNamespace(state=SimpleNamespace(step=0))
    with pytest.raises(RuntimeError, match="install broke"):
        callback.on_fit_start(trainer)
    assert _torch_globals() == before  # even before the trainer calls on_exception
    callback.on_exception(trainer, RuntimeError("install broke"))
    assert _torch_globals() == before


def test_inputs_kept_between_sampled_steps_are_read_as_fed() -> None:
    """split-leakage and nonfinite-input keep the inputs of steps not sampled and reduce them on the next
    sampled step: evaluation under inference_mode (no version counter), a buffer reused in place, and a NaN
    batch between sampled steps must all come out as when every input was looked at straight away."""
    from trainwell.doctor.session import Session

    torch.manual_seed(0)
    x, y = torch.randn(640, 8), torch.randint(0, 3, (640,))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    buffer = torch.empty(32, 8)
    session = Session(checks=["split-leakage", "nonfinite-input"])
    with session:
        for step in range(40):
            i = (step * 32) % 640
            xb = buffer.copy_(x[i:i + 32]) if step >= 30 else x[i:i + 32]  # a reused buffer at the end
            opt.zero_grad()
            nn.functional.cross_entropy(model(xb), y[i:i + 32]).backward()
            opt.step()
            if step in (12, 25):
                with torch.inference_mode():
                    model(x[:64].clone())  # made in inference mode: an inference tensor
        opt.step()  # step 41: not sampled
        assert not session.sampled
        bad = x[:32].clone()
        bad[3, 2] = float("nan")
        with torch.no_grad():
            model(bad)  # goes by on a step not sampled: kept
        assert not session.nonfinite_data
        for _ in range(9):  # on to step 50, sampled: the kept batch is read with the next model call
            opt.step()
        assert session.sampled
        model(x[:32])
        session.end()
    assert session.internal_errors == []
    assert session.nonfinite_data
