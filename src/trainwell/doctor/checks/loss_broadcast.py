"""loss-broadcast: predictions and targets whose shapes broadcast into a bigger one in a regression loss.

``F.mse_loss(pred, y)`` with ``pred`` of shape (N, 1) and ``y`` of shape (N,) compares every prediction with
every target: the (N, N) differences are averaged, the best the model can do is give every sample the same
prediction, and the loss levels off at the targets' spread. PyTorch only warns, once, in a line that scrolls
away. Judged from the shapes, on a loss that trains (its input has a gradient): both sides must grow when
broadcast, so a target given as one number (0-d, or expanded) is not this bug, nor a target whose values are
all equal (``torch.ones(N)`` against a discriminator's (N, 1) scores gives the same loss either way), nor a
``reduction="none"`` call (pairwise distances taken on purpose). One side grows too when it is one column against
the other's C > 1 ((N, 1) against (N, C), either way round): a model with C outputs fitted to one target per sample
regresses every output to it (or one output to the mean of C targets).

The same error written by hand (``((pred - y) ** 2).mean()``, ``(pred - y).abs().sum() / len(y)``) has no
loss function to watch. On sampled steps, a scalar loss that is a mean or sum (maybe divided or scaled once)
of the square or absolute value of a difference of shape (N, N), where the difference subtracts a tensor
without a gradient from the model's own (N, 1) or (N,) output of that step, is the same bug. The output is
recognized by a mark put in its graph node's metadata, which lives exactly as long as the node.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks.loss_choice import REGRESSION_LOSSES
from trainwell.doctor.events import BackwardEvent, ForwardEvent, LossEvent
from trainwell.doctor.lang import pick

_LOOK = 200  # loss calls looked at on every step; later, sampled steps only (a run's losses show early)
_MARK = "trainwell.loss_broadcast.output"  # in the metadata of the model output's graph node
_REDUCE = {"MeanBackward0", "MeanBackward1", "SumBackward0", "SumBackward1"}
_ERROR = {"PowBackward0", "AbsBackward0", "MulBackward0"}  # d ** 2, d.abs(), d * d
_SCALE = {"DivBackward0", "DivBackward1", "MulBackward0", "MulBackward1"}  # a reduction divided or scaled after

_STORY = {
    "loss": ("{loss} was given predictions of shape {pred} and targets of shape {target}: {why}. PyTorch broadcasts "
             "them to {both}",
             "{loss} 收到的预测形状为 {pred}，目标形状为 {target}：{why}。PyTorch 会把它们广播成 {both}"),
    "by_hand": ("A squared / absolute error written by hand subtracts the targets from the model's output of shape "
                "{pred}, and the difference has shape {both}: the targets are shaped {target}, not like the output",
                "手写的平方 / 绝对误差用模型形状为 {pred} 的输出减去目标，差的形状却是 {both}：目标的形状是 {target}，"
                "与输出不同"),
}
_CONSEQUENCE = {
    "pairs": (" instead of pairing each prediction with its own target, so the loss averages over all pairs. The best "
              "the model can then do is give every sample the same prediction (for a squared error, the targets' "
              "mean): the loss stops near the targets' spread and the predictions ignore the inputs.",
              "，而不是把每个预测与它自己的目标配对，于是损失是在所有配对上取平均。这样模型最多只能对所有样本给出"
              "同一个预测（平方误差下即目标的均值）：损失停在目标的离散程度附近，预测与输入无关。"),
    "stretched": (". The model is trained to give the same value in every column (or one value for several different "
                  "targets, their mean), which is not what the targets mean.",
                  "。模型被训练成在每一列输出同一个值（或用一个值去拟合几个不同的目标，即它们的均值），"
                  "这不是目标的本意。"),
}
_WHY = {
    "prediction_column": ("the predictions have a trailing dimension of 1 that the targets lack",
                          "预测比目标多了一个大小为 1 的末尾维度"),
    "target_column": ("the targets have a trailing dimension of 1 that the predictions lack",
                      "目标比预测多了一个大小为 1 的末尾维度"),
    "other": ("the two shapes differ", "两者形状不同"),
    "stretched": ("one of them has one column where the other has {c}, so that one value is compared with each of "
                  "the {c} columns", "其中一个只有 1 列而另一个有 {c} 列，于是这一个值要和那 {c} 列逐一比较"),
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
    "other": ("give the predictions and the targets the same shape before the loss "
              "(check the model's last layer and how the targets are built): assert pred.shape == y.shape",
              "在计算损失之前让预测和目标形状一致（检查模型最后一层和目标的构造方式）：assert pred.shape == y.shape"),
    "stretched": ("give the model as many outputs as each sample has targets (the last layer's out_features), "
                  "or the targets the model's shape: assert pred.shape == y.shape",
                  "让模型的输出个数等于每个样本的目标个数（最后一层的 out_features），或让目标与模型输出形状一致："
                  "assert pred.shape == y.shape"),
    "by_hand_column": ("give the targets the output's shape before subtracting: "
                       "loss = ((pred - y.view(-1, 1)) ** 2).mean()  # or pred.squeeze(-1) - y",
                       "相减之前先让目标与输出形状一致：loss = ((pred - y.view(-1, 1)) ** 2).mean()  # 或 pred.squeeze(-1) - y"),
    "by_hand_flat": ("give the targets the output's shape before subtracting: "
                     "loss = ((pred - y.view(-1)) ** 2).mean()  # y was (N, 1)",
                     "相减之前先让目标与输出形状一致：loss = ((pred - y.view(-1)) ** 2).mean()  # y 原来是 (N, 1)"),
}


def _kind(pred: torch.Size, target: torch.Size) -> str:
    if pred[-1:] == (1,) and pred[:-1] == target:
        return "prediction_column"
    if target[-1:] == (1,) and target[:-1] == pred:
        return "target_column"
    return "other"


def _stretched(pred: torch.Size, target: torch.Size) -> bool:
    """(N, C) against (N, 1), either way round, with C > 1: each sample's one value is compared with C others (a
    model with C outputs fitted to one target per sample, or one output fitted to C targets)."""
    if len(pred) != len(target) or len(pred) < 2 or pred[:-1] != target[:-1]:
        return False
    return min(pred[-1], target[-1]) == 1 and max(pred[-1], target[-1]) > 1


def _first(node: Any) -> Any:
    """The graph node that made a node's first input (None for a tensor without a graph)."""
    return node.next_functions[0][0] if node.next_functions else None


def _under_root(node: Any) -> Any:
    """What ``torch.sqrt(x)``, ``torch.sqrt(x + eps)`` or ``x ** 0.5`` takes the root of; else the node itself."""
    name = node.name()
    if name == "SqrtBackward0" or (name == "PowBackward0" and getattr(node, "_saved_exponent", None) == 0.5):
        node = _first(node)
        if (node is not None and node.name() == "AddBackward0" and len(node.next_functions) == 2
                and node.next_functions[1][0] is None):  # + eps (a constant, no graph)
            node = _first(node)
    return node


def _marked(node: Any) -> bool:
    try:
        return node is not None and _MARK in node.metadata
    except (AttributeError, RuntimeError):
        return False


@register
class LossBroadcast(Check):
    id = "loss-broadcast"
    severity = "warning"
    summary = ("predictions and targets whose shapes broadcast in a regression loss (e.g. (N, 1) and (N,)), "
               "or in a squared / absolute error (or its root) written by hand")
    text = {
        "en": Text(
            title="The loss compares predictions with targets that are not their own",
            message="{story}{consequence}",
            fix="{remedy}"),
        "zh": Text(
            title="损失把预测和不属于它的目标作比较",
            message="{story}{consequence}",
            fix="{remedy}"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.calls = 0
        self.output: tuple[int, ...] | None = None  # the shape of the latest marked model output (sampled steps)

    def on_loss(self, ev: LossEvent) -> None:
        self.calls += 1
        if self.calls >= _LOOK:
            self.session.relax(self, "on_loss")
        if self.reported or ev.name not in REGRESSION_LOSSES:
            return
        pred, target = ev.input, ev.target
        if (not (isinstance(pred, torch.Tensor) and isinstance(target, torch.Tensor)) or pred.shape == target.shape
                or not pred.requires_grad or ev.kwargs.get("reduction") == "none"):
            return  # (a metric without gradients says nothing about training; 'none': the pairs may be meant)
        try:
            both = torch.broadcast_shapes(pred.shape, target.shape)
        except RuntimeError:
            return  # the loss raises: shape-mismatch explains the error
        n = math.prod(both)
        kind = "stretched" if _stretched(pred.shape, target.shape) else None
        if kind is None and (n <= pred.numel() or n <= target.numel()):
            return  # one side is stretched over the other (a constant target): each prediction keeps one target
        flat = target.detach().reshape(-1)
        if bool((flat == flat[0]).all()):
            return  # one value for every sample (a GAN's real / fake label): the pairs give the same loss
        kind, lang = kind or _kind(pred.shape, target.shape), self.session.lang
        why = pick(lang, *_WHY[kind]).format(c=max(pred.shape[-1], target.shape[-1]) if pred.ndim else 1)
        story = pick(lang, *_STORY["loss"]).format(loss=REGRESSION_LOSSES[ev.name], pred=tuple(pred.shape),
                                                   target=tuple(target.shape), both=tuple(both), why=why)
        self._report(ev.where, {"loss": ev.name, "prediction_shape": list(pred.shape),
                                "target_shape": list(target.shape), "broadcast_shape": list(both)}, story, kind)

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        out = ev.output
        if self.reported or not ev.grad_enabled or not isinstance(out, torch.Tensor) or out.grad_fn is None:
            return
        try:  # a mark in the node itself: it lives as long as the node, and does not keep the graph alive
            out.grad_fn.metadata[_MARK] = True
        except (AttributeError, RuntimeError):
            return
        self.output = tuple(out.shape)

    @sampled_only
    def on_backward_pre(self, ev: BackwardEvent) -> None:
        """The error written by hand: a mean or sum of (d ** 2, |d|, d * d), d = output - target of shape (N, N),
        perhaps scaled once and under a square root (RMSE)."""
        node, out = ev.tensor.grad_fn, self.output
        if self.reported or out is None or node is None or ev.tensor.numel() != 1:
            return
        node = _under_root(node)  # a root-mean-square error
        if node is not None and node.name() in _SCALE:  # ``.sum() / len(y)``
            node = _first(node)
        n = out[0] if out else 0
        if (node is None or node.name() not in _REDUCE or n < 2 or out not in ((n, 1), (n,))
                or tuple(getattr(node, "_saved_self_sym_sizes", ())) != (n, n)):
            return
        error = _first(node)
        if error is None or error.name() not in _ERROR or not error.next_functions:
            return
        if error.name() == "MulBackward0" and error.next_functions[0][0] is not error.next_functions[-1][0]:
            return  # a product of two different things, not d * d
        diff = _first(error)
        if diff is None or diff.name() != "SubBackward0" or len(diff.next_functions) != 2:
            return
        # The model's own output minus a plain target (no graph): not a pairwise (N, N) built on purpose.
        inputs = [f for f, _ in diff.next_functions]
        if not ((_marked(inputs[0]) and inputs[1] is None) or (_marked(inputs[1]) and inputs[0] is None)):
            return
        target = f"{(n,)} or {(1, n)}" if out == (n, 1) else f"{(n, 1)}"  # what makes (n, n) with the output
        story = pick(self.session.lang, *_STORY["by_hand"]).format(pred=out, both=(n, n), target=target)
        self._report(ev.where, {"loss": "by_hand", "prediction_shape": list(out), "broadcast_shape": [n, n]},
                     story, "by_hand_column" if out == (n, 1) else "by_hand_flat")

    def _report(self, where: str | None, evidence: dict[str, Any], story: str, fix: str) -> None:
        lang = self.session.lang
        consequence = pick(lang, *_CONSEQUENCE["stretched" if fix == "stretched" else "pairs"])
        self.report(where, evidence, story=story, consequence=consequence, remedy=pick(lang, *_FIX[fix]))
