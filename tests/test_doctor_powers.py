"""Section 3 of issue 26: what a script can do under ``python`` it can do under ``trainwell doctor run``."""

from __future__ import annotations

import copy
import io
import pickle

import torch
import torch.nn.functional as F
from torch import nn

from trainwell.doctor.session import Session


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.r, self.b = nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.r(F.relu(self.a(x))))


def _train(model: nn.Module, opt: torch.optim.Optimizer, steps: int = 30) -> torch.Tensor:
    x, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return x


def _session() -> Session:
    return Session(on_finding=lambda f: None, on_internal_error=lambda *a: None)


def test_a_whole_model_pickles_and_copies_under_the_doctor() -> None:
    model = _Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with _session() as session:
        x = _train(model, opt)
        buf = io.BytesIO()
        torch.save(model, buf)
        twin = copy.deepcopy(model)
        pickle.dumps(opt.state_dict())
        assert session._model_hooks  # the model is watched, and still saves
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    assert not loaded._forward_hooks and not loaded._forward_pre_hooks
    assert not twin._forward_hooks and torch.allclose(twin(x), model(x)) and torch.allclose(loaded(x), model(x))
    assert not session.internal_errors


def test_torchscript_script_and_trace_under_the_doctor() -> None:
    model = _Net()
    with _session() as session:
        _train(model, torch.optim.SGD(model.parameters(), lr=0.1), steps=3)
        x = torch.randn(3, 4)
        scripted = torch.jit.script(model)  # F.relu and nn.ReLU while the doctor watches F.relu
        traced = torch.jit.trace(model, x)
        assert torch.allclose(scripted(x), model(x)) and torch.allclose(traced(x), model(x))
    assert not session.internal_errors
