"""Multi-task losses: uncertainty weighting, fixed weights, validation, per-head accuracy, and fit end to end."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.data import Dataset

import trainwell
from trainwell.engine.checkpoint import load_checkpoint
from trainwell.engine.trainer import Accuracy
from trainwell.losses import MultiTaskLoss, UncertaintyWeighting

# --- UncertaintyWeighting ------------------------------------------------------


def test_uncertainty_weighting_value_and_gradient_by_hand() -> None:
    w = UncertaintyWeighting(2)
    assert torch.equal(w.log_vars.detach(), torch.zeros(2))
    assert w.weights() == [0.5, 0.5]
    total = w([torch.tensor(2.0), torch.tensor(0.5)])
    assert total.item() == pytest.approx(0.5 * (2.0 + 0.5))  # 0.5 * (exp(-0) * L + 0) summed
    total.backward()
    # d/ds 0.5 * (exp(-s) * L + s) = 0.5 * (1 - exp(-s) * L): negative for the large loss, so a descent
    # step raises its log-variance (lowers its weight); positive for the small one.
    assert w.log_vars.grad.tolist() == pytest.approx([0.5 * (1 - 2.0), 0.5 * (1 - 0.5)])

    with torch.no_grad():
        w.log_vars.copy_(torch.tensor([math.log(2.0), -1.0]))
    assert w.weights() == pytest.approx([0.25, 0.5 * math.e])
    expected = 0.5 * (2.0 / 2.0 + math.log(2.0)) + 0.5 * (math.e * 0.5 - 1.0)
    assert w([torch.tensor(2.0), torch.tensor(0.5)]).item() == pytest.approx(expected)


def test_uncertainty_weighting_settles_at_log_of_each_loss() -> None:
    w = UncertaintyWeighting(2)
    opt = torch.optim.SGD(w.parameters(), lr=0.5)
    losses = [torch.tensor(4.0), torch.tensor(0.25)]
    for _ in range(100):
        opt.zero_grad()
        w(losses).backward()
        opt.step()
    assert w.log_vars.tolist() == pytest.approx([math.log(4.0), math.log(0.25)], abs=1e-3)
    assert w.weights() == pytest.approx([0.5 / 4.0, 0.5 / 0.25], rel=1e-3)


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_uncertainty_weighting_rejects_bad_task_count(n: object) -> None:
    with pytest.raises(ValueError, match="positive int"):
        UncertaintyWeighting(n)  # type: ignore[arg-type]


def test_uncertainty_weighting_wants_one_scalar_per_task() -> None:
    w = UncertaintyWeighting(2)
    with pytest.raises(ValueError, match="got 3 losses"):
        w([torch.tensor(1.0)] * 3)
    with pytest.raises(ValueError, match=r"scalar tensor; got \(4,\).*reduction='mean'"):
        w([torch.tensor(1.0), torch.ones(4)])


# --- MultiTaskLoss -------------------------------------------------------------


def _batch() -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    logits, value = torch.randn(8, 3, generator=g), torch.randn(8, generator=g)
    return (logits, value), (torch.randint(0, 3, (8,), generator=g), torch.randn(8, generator=g))


def test_fixed_weights_combine_unweighted_parts() -> None:
    (logits, value), (cls, target) = _batch()
    ce, mse = nn.functional.cross_entropy(logits, cls), nn.functional.mse_loss(value, target)
    loss = MultiTaskLoss([nn.CrossEntropyLoss(), nn.MSELoss()], weights=[1.0, 0.25])
    out = loss((logits, value), (cls, target))
    assert set(out) == {"loss", "task0", "task1"}  # fixed weights are not logged
    assert out["loss"].item() == pytest.approx((ce + 0.25 * mse).item())
    assert out["task0"].item() == pytest.approx(ce.item()) and out["task1"].item() == pytest.approx(mse.item())
    assert loss.weights() == {"task0": 1.0, "task1": 0.25}
    default = MultiTaskLoss({"cls": nn.CrossEntropyLoss(), "reg": nn.MSELoss()})
    assert default((logits, value), (cls, target))["loss"].item() == pytest.approx((ce + mse).item())
    by_name = MultiTaskLoss({"cls": nn.CrossEntropyLoss(), "reg": nn.MSELoss()}, weights={"reg": 2.0, "cls": 0.5})
    # outputs as a dict, targets as a tuple in task order
    out = by_name({"reg": value, "cls": logits}, (cls, target))
    assert out["loss"].item() == pytest.approx((0.5 * ce + 2.0 * mse).item())


def test_learned_weights_are_logged_and_trained() -> None:
    (logits, value), targets = _batch()
    weighting = UncertaintyWeighting(2)
    loss = MultiTaskLoss({"cls": nn.CrossEntropyLoss(), "reg": nn.MSELoss()}, weights=weighting)
    assert list(loss.parameters()) == [weighting.log_vars]
    out = loss((logits, value), targets)
    assert set(out) == {"loss", "cls", "reg", "weight_cls", "weight_reg"}
    assert out["weight_cls"].item() == 0.5
    assert out["loss"].item() == pytest.approx(0.5 * (out["cls"] + out["reg"]).item())
    out["loss"].backward()
    assert weighting.log_vars.grad is not None and not out["cls"].requires_grad  # parts are for logging only


@pytest.mark.parametrize(("kwargs", "call", "message"), [
    ({"weights": [1.0]}, None, r"Got 1 weights \[1.0\] for 2 tasks \['a', 'b'\]"),
    ({"weights": {"a": 1.0, "c": 1.0}}, None, r"missing: \['b'\], unknown: \['c'\]"),
    ({"weights": [1.0, -1.0]}, None, r"weight of task 'b' is -1.0"),
    ({"weights": [0, 0]}, None, "All weights are zero"),
    ({"weights": "1,1"}, None, "weights must be a list of numbers"),
    ({"weights": UncertaintyWeighting(3)}, None, r"UncertaintyWeighting\(3\) does not match the 2 losses"),
    ({}, ((torch.zeros(2, 3),), (torch.zeros(2), torch.zeros(2))), r"Got 1 outputs for 2 tasks.*one output per task"),
    ({}, (torch.zeros(2, 3), (torch.zeros(2), torch.zeros(2))), r"outputs are one Tensor of shape \(2, 3\)"),
    ({}, ((torch.zeros(2), torch.zeros(2)), torch.zeros(2, 2)), r"targets are one Tensor.*\(x, \(y_task0"),
    ({}, ((torch.zeros(2), torch.zeros(2)), {"a": torch.zeros(2)}), r"missing: \['b'\]"),
])
def test_multitask_loss_errors_say_what_and_how(kwargs: dict, call: tuple | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        loss = MultiTaskLoss({"a": nn.MSELoss(), "b": nn.MSELoss()}, **kwargs)
        if call is not None:
            loss(*call)


@pytest.mark.parametrize(("losses", "message"), [
    ([nn.MSELoss()], "at least two task losses"),
    ({"loss": nn.MSELoss(), "b": nn.MSELoss()}, "clash with trainwell's own columns"),
    ({"weight_a": nn.MSELoss(), "b": nn.MSELoss()}, "clash"),
    ({"a b": nn.MSELoss(), "b": nn.MSELoss()}, "not usable as a column name"),
    ({"a": "mse", "b": nn.MSELoss()}, "not callable"),
    (nn.MSELoss(), "a dict .* or a list"),
])
def test_multitask_loss_rejects_bad_losses(losses: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MultiTaskLoss(losses)  # type: ignore[arg-type]


# --- per-head accuracy ---------------------------------------------------------


def test_accuracy_per_head_and_single_output_unchanged() -> None:
    logits = torch.tensor([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0], [2.0, 0.0]])
    y = torch.tensor([0, 1, 1, 0])
    single = Accuracy()
    single.update(logits, y)
    assert single.compute() == {"accuracy": 0.75}

    named = Accuracy(names=["kind", "size"])
    named.update((logits, torch.randn(4)), (y, torch.randn(4)))  # a regression head gets no accuracy
    assert named.compute() == {"accuracy_kind": 0.75}
    by_index, by_key = Accuracy(), Accuracy()
    by_index.update((logits, logits), (y, 1 - y))
    by_key.update({"p": logits}, {"p": y})
    assert by_index.compute() == {"accuracy_0": 0.75, "accuracy_1": 0.25}
    assert by_key.compute() == {"accuracy_p": 0.75}


# --- fit end to end ------------------------------------------------------------


def _example() -> Any:
    """examples/multitask_digits.py as a module: the test trains the README example's own model and data."""
    path = Path(__file__).parents[1] / "examples" / "multitask_digits.py"
    spec = importlib.util.spec_from_file_location("multitask_digits", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE = _example()
_DigitsTwoTargets = EXAMPLE.DigitsTwoTargets


def _TwoHeads() -> nn.Module:  # noqa: N802 - stands in for the class it builds
    return EXAMPLE.TwoHeads(hidden=32)


@pytest.fixture(scope="module")
def digits() -> tuple[_DigitsTwoTargets, _DigitsTwoTargets]:
    from sklearn.datasets import load_digits

    data = load_digits()
    x = torch.tensor(data.data[:800], dtype=torch.float32) / 16.0
    digit = torch.tensor(data.target[:800], dtype=torch.long)
    ink = x.mean(1)
    ink = (ink - ink.mean()) / ink.std()
    return _DigitsTwoTargets(x[:600], digit[:600], ink[:600]), _DigitsTwoTargets(x[600:], digit[600:], ink[600:])


def _multitask_loss() -> MultiTaskLoss:
    return MultiTaskLoss({"digit": nn.CrossEntropyLoss(), "ink": nn.MSELoss()}, weights=UncertaintyWeighting(2))


def test_fit_learns_two_heads_and_logs_each_task(digits: tuple, tmp_path: Path) -> None:
    train, val = digits
    torch.manual_seed(0)
    loss = _multitask_loss()
    result = trainwell.fit(_TwoHeads(), train, val, loss=loss, epochs=5, lr=1e-2, progress=False, device="cpu",
                           out=tmp_path / "run")
    run = tmp_path / "run"
    with (run / "metrics.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    for column in ("train_digit", "val_digit", "train_ink", "val_ink", "val_accuracy_digit",
                   "train_weight_digit", "val_weight_ink"):
        assert rows[-1][column] != "", column
    assert "val_accuracy_ink" not in rows[0]  # the regression head has no accuracy
    assert float(rows[-1]["val_accuracy_digit"]) > 0.6  # chance is 0.1; 0.825 here
    assert float(rows[-1]["train_digit"]) < float(rows[0]["train_digit"])
    assert result.history[-1]["val_accuracy"] is None  # no single "accuracy" for a two-head model

    log_vars = loss.weighting.log_vars.detach()
    assert not torch.allclose(log_vars, torch.zeros(2))  # the weights were learned
    assert float(rows[-1]["val_weight_digit"]) == pytest.approx(loss.weights()["digit"], rel=1e-5)

    page = (run / "report.html").read_text(encoding="utf-8")
    assert 'alt="loss per task"' in page and 'alt="task weights"' in page
    assert "Validation accuracy (digit)" in page  # summary row

    ckpt = load_checkpoint(run / "checkpoints" / "last.pt")
    assert torch.equal(ckpt["loss"]["weighting.log_vars"], log_vars)
    resumed = _multitask_loss()
    resumed.load_state_dict(ckpt["loss"])
    assert resumed.weights() == pytest.approx(loss.weights())


def test_fit_with_fixed_weights_and_a_user_optimizer(digits: tuple) -> None:
    train, val = digits
    torch.manual_seed(0)
    fixed = MultiTaskLoss({"digit": nn.CrossEntropyLoss(), "ink": nn.MSELoss()}, weights=[1.0, 0.5])
    result = trainwell.fit(_TwoHeads(), train, val, loss=fixed, epochs=1, progress=False, device="cpu")
    row = result.final
    assert row["train_loss"] == pytest.approx(row["train_digit"] + 0.5 * row["train_ink"], rel=1e-5)
    assert not any(k.startswith(("train_weight", "val_weight")) for k in row)

    model, learned = _TwoHeads(), _multitask_loss()
    with pytest.warns(UserWarning, match="2 trainable values that your optimizer does not update"):
        trainwell.fit(model, train, loss=learned, optimizer=torch.optim.SGD(model.parameters(), lr=0.01),
                      epochs=1, progress=False, device="cpu")
    assert torch.equal(learned.weighting.log_vars.detach(), torch.zeros(2))


class _DictHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 3), nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"a": self.a(x), "b": self.b(x).squeeze(-1)}


class _DictTargets(Dataset):
    def __init__(self, n: int) -> None:
        g = torch.Generator().manual_seed(1)
        self.x, self.a, self.b = torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g), torch.randn(n)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return self.x[i], {"a": self.a[i], "b": self.b[i]}


def test_fit_with_dict_outputs_weighs_batches_by_size() -> None:
    torch.manual_seed(0)
    model, val = _DictHeads(), _DictTargets(300)  # validation batches of 256 and 44
    loss = MultiTaskLoss({"a": nn.CrossEntropyLoss(), "b": nn.MSELoss()})
    result = trainwell.fit(model, _DictTargets(64), val, loss=loss, epochs=1, progress=False, device="cpu")
    with torch.no_grad():
        out = model(val.x)
        expected = nn.functional.cross_entropy(out["a"], val.a).item()
        accuracy = (out["a"].argmax(1) == val.a).float().mean().item()
    assert result.final["val_a"] == pytest.approx(expected, rel=1e-5)
    assert result.final["val_accuracy_a"] == pytest.approx(accuracy)


def test_task_plots_only_with_parts() -> None:
    from trainwell.report.plots import loss_parts, task_loss_plot, task_weight_plot

    plain = [{"epoch": 1, "step": 3, "train_loss": 1.0, "val_loss": 0.9, "val_accuracy": 0.5}]
    assert loss_parts(plain) == [] and task_loss_plot(plain) is None and task_weight_plot(plain) is None
    rows = [{"epoch": e, "train_loss": 1.0 / e, "train_a": 2.0 / e, "val_a": 2.1 / e, "train_b": -0.1 * e,
             "train_weight_a": 0.5 + e / 10, "val_weight_a": 0.5, "val_accuracy_a": 0.5} for e in (1, 2)]
    assert loss_parts(rows) == ["a", "b"]
    assert task_loss_plot(rows).startswith(b"\x89PNG") and task_weight_plot(rows).startswith(b"\x89PNG")
