"""graph-retained's rule for model calls between two backward() calls: a graph some backward() went through
does not count (it freed what the graph held), whether by Tensor.backward() or torch.autograd.grad."""

from __future__ import annotations

import torch
from torch import nn

from trainwell.doctor.checks.graph_retained import _RunProbe
from trainwell.doctor.session import Session


def _probe(t: torch.Tensor) -> _RunProbe:
    probe = _RunProbe()
    t.grad_fn.register_prehook(probe.mark)  # as the check does
    return probe


def test_a_backward_or_autograd_grad_through_the_node_marks_it_used() -> None:
    w = torch.randn(3, requires_grad=True)
    out = w * 2
    probe = _probe(out)
    assert not probe.used
    out.sum().backward()
    assert probe.used
    inner = (w ** 2).sum()
    second = _probe(inner)
    torch.autograd.grad(inner, w)  # MAML's inner step: no Tensor.backward()
    assert second.used
    unused = _probe(w * 3)
    (w * 4).sum().backward()  # a backward() through another graph
    assert not unused.used


def _loop(session: Session, keep_validation: bool) -> list[str]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(256, 6), torch.randn(256, 1)
    kept: list[torch.Tensor] = []
    with session:
        for epoch in range(4):
            for i in range(0, 192, 32):
                # Sixteen calls for one backward() (pieces of the batch), kept for a whole epoch after it: used.
                outs = [model(x[i + j:i + j + 2]) for j in range(0, 32, 2)]
                loss = nn.functional.mse_loss(torch.cat(outs), y[i:i + 32])
                opt.zero_grad()
                loss.backward()
                opt.step()
                if i == 0:
                    kept = outs
            total = 0.0
            for i in range(192, 256, 4):  # sixteen validation calls with gradients on
                out = model(x[i:i + 4])
                total = total + nn.functional.mse_loss(out, y[i:i + 4]) if keep_validation else total
        session.end()
    del kept
    return [f.id for f in session.findings]


def test_calls_a_backward_went_through_are_quiet_and_a_kept_validation_sum_is_found() -> None:
    assert _loop(Session(checks=["graph-retained"]), keep_validation=False) == []
    assert _loop(Session(checks=["graph-retained"]), keep_validation=True) == ["graph-retained"]
