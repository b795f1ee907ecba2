"""loss-broadcast: a regression loss given predictions and targets of shapes that broadcast into a bigger one.

``F.mse_loss(pred, y)`` with ``pred`` of shape (N, 1) and ``y`` of shape (N,) compares every prediction with
every target: the (N, N) differences are averaged, the best the model can do is predict the targets' mean
for every sample, and the loss levels off at their variance. PyTorch only warns, once, in a line that scrolls away. Judged from
the shapes alone: both sides must grow when broadcast, so a target given as one number for the whole batch
(a constant, which only the target side stretches) is not this bug.

The same error written by hand (``((pred - y) ** 2).mean()``, ``(pred - y).abs().sum()``) has no loss
function to watch: on sampled steps, a scalar loss that reduces a square or absolute value of a
difference of shape (N, N), while the model's output that step was (N, 1) or (N,), is the same bug.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.events import BackwardEvent, ForwardEvent, LossEvent
from trainwell.doctor.lang import pick, told

_REGRESSION = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
_LOOK = 200  # loss calls looked at on every step; later, sampled steps only (a run's losses show early)

_TOLD = {
    "prediction_column": (
        "the predictions have a trailing dimension of 1 that the targets lack",
        "预测比目标多了一个大小为 1 的末尾维度"),
    "target_column": (
        "the targets have a trailing dimension of 1 that the predictions lack",
        "目标比预测多了一个大小为 1 的末尾维度"),
    "other": ("the two shapes differ", "两者形状不同"),
    "by_hand": ("the error is computed by hand, and the difference of predictions and targets came out as {both}",
                "误差是手写计算的，预测与目标之差的形状变成了 {both}"),
}
_FIX = {
    "prediction_column": ("drop the prediction's last dimension (or give the targets one): "
                          "loss = criterion(pred.squeeze(-1), y)  # or criterion(pred, y.unsqueeze(-1))",
                          "去掉预测的最后一维（或给目标加上这一维）："
                          "loss = criterion(pred.squeeze(-1), y)  # 或 criterion(pred, y.unsqueeze(-1))"),
    "target_column": ("drop the target's last dimension (or give the predictions one): "
                      "loss = criterion(pred, y.squeeze(-1))  # or criterion(pred.unsqueeze(-1), y)",
                      "去掉目标的最后一维（或给预测加上这一维）："
                      "loss = criterion(pred, y.squeeze(-1))  # 或 criterion(pred.unsqueeze(-1), y)"),
    "by_hand": ("give the predictions and the targets the same shape before subtracting: "
                "loss = ((pred.squeeze(-1) - y) ** 2).mean()  # or y.view(-1, 1); F.mse_loss(pred, y) warns about this",
                "相减之前先让预测和目标形状一致：loss = ((pred.squeeze(-1) - y) ** 2).mean()"
                "  # 或 y.view(-1, 1)；用 F.mse_loss(pred, y) 时 PyTorch 会对此发出警告"),
    "other": ("give the predictions and the targets the same shape before the loss "
              "(check the model's last layer and how the targets are built): assert pred.shape == y.shape",
              "在计算损失之前让预测和目标形状一致（检查模型最后一层和目标的构造方式）：assert pred.shape == y.shape"),
}


_REDUCE = {"MeanBackward0", "MeanBackward1", "SumBackward0", "SumBackward1"}
_ERROR = {"PowBackward0", "AbsBackward0", "MulBackward0"}  # d ** 2, d.abs(), d * d
_SCALE = {"DivBackward0", "DivBackward1", "MulBackward0", "MulBackward1"}  # a reduction divided or scaled after


def _first(node: Any) -> Any:
    """The graph node that made a node's first input (None for a constant)."""
    return node.next_functions[0][0] if node.next_functions else None


def _kind(pred: torch.Size, target: torch.Size) -> str:
    if pred[-1:] == (1,) and pred[:-1] == target:
        return "prediction_column"
    if target[-1:] == (1,) and target[:-1] == pred:
        return "target_column"
    return "other"


@register
class LossBroadcast(Check):
    id = "loss-broadcast"
    severity = "warning"
    summary = ("predictions and targets whose shapes broadcast in a regression loss (e.g. (N, 1) and (N,)), "
               "or in a squared / absolute error written by hand")
    text = {
        "en": Text(
            title="The loss compares every prediction with every target",
            message="{loss} was given predictions of shape {pred} and targets of shape {target}: {why}. PyTorch "
                    "broadcasts them to {both} ({times}x the elements of either) instead of pairing each prediction "
                    "with its own target, so the loss averages over all pairs. The best the model can then do is "
                    "give every sample the same prediction (for MSE, the targets' mean): the loss "
                    "stops near the targets' spread and the predictions ignore the inputs.",
            fix="{remedy}"),
        "zh": Text(
            title="损失把每个预测和每个目标都比较了一遍",
            message="{loss} 收到的预测形状为 {pred}，目标形状为 {target}：{why}。PyTorch 会把它们广播成 {both}"
                    "（元素数是任一方的 {times} 倍），而不是把每个预测与它自己的目标配对，于是损失是在所有配对上取平均。"
                    "这样模型最多只能对所有样本给出同一个预测（MSE 下即目标的均值）：损失停在目标的离散程度附近，"
                    "预测与输入无关。",
            fix="{remedy}"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.calls = 0
        # The shape of the model's latest output with a graph, and the id of its graph node (sampled steps).
        self.output: tuple[tuple[int, ...], int] | None = None

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        out = ev.output
        if ev.grad_enabled and isinstance(out, torch.Tensor) and out.grad_fn is not None:
            # Its graph node by id, not the node: holding it would keep the graph alive (graph-retained watches).
            self.output = (tuple(out.shape), id(out.grad_fn))

    @sampled_only
    def on_backward_pre(self, ev: BackwardEvent) -> None:
        """The error written by hand: reduce(square or |.| of a difference) with a (N, N) difference."""
        node = ev.tensor.grad_fn
        if self.reported or self.output is None or node is None or ev.tensor.numel() != 1:
            return
        out, made_it = self.output
        if node.name() in _SCALE:  # ``.sum() / len(y)``
            node = _first(node)
        n = out[0] if out else 0
        if (node is None or node.name() not in _REDUCE or n < 2 or out not in ((n, 1), (n,))
                or tuple(getattr(node, "_saved_self_sym_sizes", ())) != (n, n)):
            return
        error = _first(node)
        diff = _first(error) if error is not None and error.name() in _ERROR else None
        # The model's output itself goes into the difference (not a pairwise (N, N) built from it on purpose).
        if diff is None or diff.name() != "SubBackward0" or made_it not in {id(f) for f, _ in diff.next_functions}:
            return
        target = f"{(n,)} or {(1, n)}" if out == (n, 1) else f"{(n, 1)}"  # what makes (n, n) with the output
        self._report(ev.where, "by_hand", pick(self.session.lang, "The squared / absolute error", "手写的平方 / 绝对误差"),
                     out, target, (n, n), n)

    def on_loss(self, ev: LossEvent) -> None:
        self.calls += 1
        if self.calls >= _LOOK:
            self.session.relax(self, "on_loss")
        if self.reported or ev.name not in _REGRESSION:
            return
        pred, target = ev.input, ev.target
        if not (isinstance(pred, torch.Tensor) and isinstance(target, torch.Tensor)) or pred.shape == target.shape:
            return
        try:
            both = torch.broadcast_shapes(pred.shape, target.shape)
        except RuntimeError:
            return  # the loss raises: shape-mismatch explains the error
        n = math.prod(both)
        if n <= pred.numel() or n <= target.numel():
            return  # one side is stretched over the other (a constant target): each prediction keeps one target
        loss = {"mse_loss": "MSELoss", "l1_loss": "L1Loss", "smooth_l1_loss": "SmoothL1Loss",
                "huber_loss": "HuberLoss"}[ev.name]
        self._report(ev.where, _kind(pred.shape, target.shape), loss, tuple(pred.shape), tuple(target.shape),
                     tuple(both), n // max(pred.numel(), target.numel()))

    def _report(self, where: str | None, kind: str, loss: str, pred: tuple[int, ...], target: tuple[int, ...] | str,
                both: tuple[int, ...], times: int) -> None:
        parts = told(self.session.lang, {"why": _TOLD[kind], "remedy": _FIX[kind]}, both=both)
        self.report(where, {"loss": loss, "kind": kind, "prediction_shape": list(pred), "target_shape": target if isinstance(target, str) else list(target),
                            "broadcast_shape": list(both)},
                    loss=loss, pred=pred, target=target, both=both, times=times, **parts)
