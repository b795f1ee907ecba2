"""wrong-loss-for-task / sigmoid-before-bce-with-logits: a loss that does not fit its inputs.

Judged from the values given to the loss: class ids or one-hot rows fed to a regression
loss, class indices fed to a binary loss, raw scores fed to NLLLoss (log-probabilities are never
above 0), probabilities fed to a loss that wants logits.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register
from trainwell.doctor.events import LossEvent
from trainwell.doctor.lang import pick, told

REGRESSION_LOSSES = {"mse_loss": "MSELoss", "l1_loss": "L1Loss", "smooth_l1_loss": "SmoothL1Loss", "huber_loss": "HuberLoss"}
_LOOK = 200  # loss calls examined on every step; later, sampled steps only
_ABOVE_LOG_PROB = 1e-3  # an NLLLoss input above this is not a log-probability (rounding stays far below)
# Float targets of a regression loss taken for class labels: the whole numbers 0..C-1 with C in this range...
_FLOAT_CLASSES = (3, 50)
_FLOAT_SAMPLES = 10  # ...seen at least this many times C in all (counted over the calls so far), ...
_BALANCE = 2.0  # ...each value within this factor of 1 / C of the targets (ordered scores are rarely balanced)

_DETAIL = {
    "one_hot": ("The targets are one-hot rows ({classes} columns, one 1 per row): this is classification.",
                "目标是 one-hot 行（{classes} 列，每行一个 1）：这是分类任务。"),
    "class_ids": ("The targets are integer class ids ({classes} distinct values per batch): this is classification.",
                  "目标是整数类别编号（每个批次 {classes} 种取值）：这是分类任务。"),
    "float_ids": ("The targets are the whole numbers 0 to {top}, stored as floats, and the {classes} values are about "
                  "equally frequent (each {spread} of the targets): class labels 0..C-1 turned into floats "
                  "(y.long() gives them back), so this is classification. (Ordered scores, such as ratings, are "
                  "rarely this balanced; if these are, a regression loss can be right.)",
                  "目标是以浮点数存储的整数 0 到 {top}，并且这 {classes} 种取值出现的次数大致相同（每种占目标的 "
                  "{spread}）：这是被转成浮点数的 0..C-1 类别标签（y.long() 可以还原），所以这是分类任务。"
                  "（有序的分数，比如评分，很少这么均衡；如果确实是评分，用回归损失也可以。）"),
    "bce_ids": ("The targets are class indices up to {classes}, but a binary loss needs targets in [0, 1]: values "
                "above 1 make it meaningless.",
                "目标是最大到 {classes} 的类别编号，但二分类损失要求目标在 [0, 1] 之间：大于 1 的目标让损失失去意义。"),
}
# What the finding says, per kind of mismatch: the regression and binary losses share one story.
_TOLD = {
    "headline": ("{loss} used for a classification task", "分类任务用了 {loss}"),
    "story": ("{detail} {loss} does not treat the outputs as a choice between classes: the model learns slowly, "
              "predicts values in between the classes, and its scores are not class probabilities (seen on {count} "
              "loss calls).",
              "{detail}{loss} 不会把输出当作在各个类别之间做选择：模型学得慢，预测出介于类别之间的值，"
              "输出的分数也不是类别概率（在 {count} 次损失调用中都是如此）。"),
    "remedy": ("use cross-entropy on logits with integer class ids: loss = F.cross_entropy(model(x), y)  "
               "# y: class index 0..C-1 (y = onehot.argmax(1)); model outputs one score per class",
               "对 logits 使用交叉熵，目标用整数类别编号：loss = F.cross_entropy(model(x), y)  "
               "# y 为 0..C-1 的类别下标（y = onehot.argmax(1)）；模型对每个类别输出一个分数"),
}
_TOLD_NLL = {
    "headline": ("NLLLoss given raw scores, not log-probabilities", "NLLLoss 收到的是原始分数，而不是对数概率"),
    "story": ("The values given to NLLLoss reach {top:.3g} (seen on {count} loss calls), but log-probabilities are "
              "never above 0: the model's raw scores go in without log_softmax. NLLLoss only takes minus the "
              "target's value, so training pushes that score up without bound and the loss sinks below zero instead "
              "of towards it; the other classes' scores never enter the loss, and nothing makes the outputs a "
              "probability distribution.",
              "传给 NLLLoss 的值最大达到 {top:.3g}（在 {count} 次损失调用中都是如此），但对数概率永远不会大于 0："
              "模型的原始分数没有经过 log_softmax 就进了损失。NLLLoss 只取目标类别那个值的相反数，"
              "所以训练会把这个分数无限推高，损失跌到 0 以下而不是趋向 0；其他类别的分数根本不进入损失，"
              "输出也不会成为概率分布。"),
    "remedy": ("pass the raw scores to cross_entropy, which applies log_softmax itself: "
               "loss = F.cross_entropy(scores, y)  # the same as F.nll_loss(F.log_softmax(scores, dim=1), y)",
               "把原始分数交给 cross_entropy，它自己会做 log_softmax：loss = F.cross_entropy(scores, y)"
               "  # 等价于 F.nll_loss(F.log_softmax(scores, dim=1), y)"),
}


def _is_one_hot(t: torch.Tensor) -> bool:
    """(B, C) rows of 0/1 with exactly one 1 each."""
    if t.ndim != 2 or t.shape[1] < 2 or t.dtype == torch.bool:
        return False
    return bool(((t == 0) | (t == 1)).all()) and bool((t.sum(dim=1) == 1).all())


@register
class WrongLossForTask(Check):
    id = "wrong-loss-for-task"
    severity = "warning"
    summary = "a regression loss (MSE / L1) used on class labels, BCE on multi-class indices, NLLLoss on raw scores"
    text = {
        "en": Text(title="{headline}", general="A loss that does not fit the classification task", message="{story}",
                   fix="{remedy}"),
        "zh": Text(title="{headline}", general="分类任务用了不合适的损失函数", message="{story}", fix="{remedy}"),
    }

    HITS = 3

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.calls = 0
        self.hits = 0
        self.top = float("-inf")  # the largest NLLLoss input seen (raw scores)
        self.tally: torch.Tensor | None = None  # how often each whole-number float target was seen (float_ids)
        self.not_ids = False  # a float target of a regression loss that is not a small whole number: regression

    def on_loss(self, ev: LossEvent) -> None:
        if self.calls >= _LOOK:
            self.session.relax(self, "on_loss")  # the loss a run trains with shows in its first calls
            if not self.session.sampled:
                return
        if self.reported:
            return
        inp, t = ev.input, ev.target
        if not (isinstance(inp, torch.Tensor) and isinstance(t, torch.Tensor)) or not inp.requires_grad:
            return  # metrics computed without gradients say nothing about the training loss
        self.calls += 1
        found = self._judge(ev.name, inp.detach(), t.detach())
        if found is None:
            return
        kind, size = found
        self.hits += 1
        if kind == "nll_raw":
            self.top = max(self.top, size)
        if self.hits < self.HITS:
            return
        lang = self.session.lang
        evidence = {"loss": ev.name, "target_kind": kind, "target_shape": list(t.shape), "input_shape": list(inp.shape)}
        if kind == "nll_raw":
            evidence["max_input"] = self.top
            parts = told(lang, _TOLD_NLL, top=self.top, count=self.hits)
        elif kind == "float_ids":
            counts = size
            evidence.update(classes=len(counts), counts=counts)
            total = sum(counts)
            spread = f"{min(counts) / total:.0%}-{max(counts) / total:.0%}"
            detail = pick(lang, *_DETAIL[kind]).format(top=len(counts) - 1, classes=len(counts), spread=spread)
            parts = told(lang, _TOLD, loss=REGRESSION_LOSSES[ev.name], count=self.hits, detail=detail)
        else:
            evidence["classes"] = size
            detail = pick(lang, *_DETAIL[kind]).format(classes=size)
            parts = told(lang, _TOLD, loss=REGRESSION_LOSSES.get(ev.name, "BCEWithLogitsLoss"), count=self.hits, detail=detail)
        self.report(ev.where, evidence, **parts)

    def _judge(self, name: str, inp: torch.Tensor, t: torch.Tensor) -> tuple[str, Any] | None:
        if name == "nll_loss" and inp.is_floating_point() and inp.numel() >= 2:
            top = float(inp.max())
            return ("nll_raw", top) if top > _ABOVE_LOG_PROB else None
        if name in REGRESSION_LOSSES:
            if t.shape == inp.shape and _is_one_hot(t):
                return "one_hot", int(t.shape[1])
            if not t.is_floating_point() and t.dtype != torch.bool and t.numel() >= 2 and t.numel() == inp.numel():
                distinct = int(torch.unique(t).numel())
                if int(t.min()) >= 0 and 2 <= distinct <= 50:
                    return "class_ids", distinct
            if t.is_floating_point() and t.numel() >= 2 and t.numel() == inp.numel() and not self.not_ids:
                counts = self._float_ids(t)
                if counts is not None:
                    return "float_ids", counts
        elif name == "binary_cross_entropy_with_logits" and t.is_floating_point() and t.numel() >= 2:
            top = float(t.max())
            if top > 1 and float(t.min()) >= 0 and bool((t == t.round()).all()) and top <= 1000:
                return "bce_ids", int(top)
        return None

    def _float_ids(self, t: torch.Tensor) -> list[int] | None:
        """The count of each class when the float targets seen so far are balanced class labels 0..C-1, else None.
        A target that is not a whole number in [0, 50) turns the question off for the run: this is regression."""
        flat = t.reshape(-1)
        lo, hi = _FLOAT_CLASSES
        if not bool(((flat == flat.round()) & (flat >= 0) & (flat < hi)).all()):
            self.not_ids = True
            return None
        counts = torch.bincount(flat.long(), minlength=hi)[:hi].cpu()
        self.tally = counts if self.tally is None else self.tally + counts
        seen = self.tally[: int(self.tally.nonzero().max()) + 1].tolist()
        classes, total = len(seen), sum(seen)
        if classes < lo or total < _FLOAT_SAMPLES * classes:
            return None
        if min(seen) < total / classes / _BALANCE or max(seen) > total / classes * _BALANCE:
            return None  # some values much rarer or commoner than others: an ordered score, not class labels
        return seen

# Ops that only move values around: the probabilities pass through them unchanged.
_PASS_THROUGH = {"SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0", "ViewBackward0",
                 "ReshapeAliasBackward0", "UnsafeViewBackward0", "ExpandBackward0", "SelectBackward0",
                 "SliceBackward0", "CloneBackward0", "ToCopyBackward0", "TBackward0", "PermuteBackward0",
                 "TransposeBackward0", "CatBackward0", "StackBackward0", "IndexBackward0", "AliasBackward0"}
_PROBABILITY_OPS = {"SigmoidBackward0": "sigmoid", "SoftmaxBackward0": "softmax"}


def made_by(x: torch.Tensor, hops: int = 6) -> str | None:
    """The op that produced ``x``'s values ("sigmoid", "softmax"), looking through reshapes; else None."""
    fn = x.grad_fn
    for _ in range(hops):
        if fn is None:
            return None
        name = type(fn).__name__
        if name in _PROBABILITY_OPS:
            return _PROBABILITY_OPS[name]
        if name not in _PASS_THROUGH:
            return None
        fn = next((f for f, _ in fn.next_functions if f is not None), None)
    return None


@register
class SigmoidBeforeBCEWithLogits(Check):
    id = "sigmoid-before-bce-with-logits"
    severity = "error"
    summary = "probabilities (sigmoid output) passed to BCEWithLogitsLoss, which applies sigmoid itself"
    text = {
        "en": Text(
            title="Sigmoid output passed to BCEWithLogitsLoss",
            message="On {count} calls the values given to BCEWithLogitsLoss came straight out of {op} (all between "
                    "{low} and {high}): these are probabilities, not logits. BCEWithLogitsLoss applies sigmoid "
                    "itself, so it runs twice: predictions are squeezed into [0.5, 0.73], the loss can never get "
                    "small and the model barely learns.",
            fix="remove the sigmoid before the loss and pass the raw scores: loss = F.binary_cross_entropy_with_logits"
                "(model(x), y)  # use torch.sigmoid(logits) only to read probabilities"),
        "zh": Text(
            title="把 sigmoid 的输出传给了 BCEWithLogitsLoss",
            message="在 {count} 次调用中，传给 BCEWithLogitsLoss 的值直接来自 {op}（全部在 {low} 和 {high} 之间）："
                    "这些是概率，不是 logits。BCEWithLogitsLoss 自己会做 sigmoid，等于做了两次 sigmoid："
                    "预测被压缩到 [0.5, 0.73]，损失永远降不下来，模型几乎学不到东西。",
            fix="去掉损失前的 sigmoid，直接传原始分数：loss = F.binary_cross_entropy_with_logits(model(x), y)"
                "  # 只在需要概率时再用 torch.sigmoid(logits)"),
    }

    HITS = 2

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.hits = 0
        self.calls = 0
        self.low, self.high = 1.0, 0.0

    def on_loss(self, ev: LossEvent) -> None:
        # Judged from how the values were made, not their range: real logits can sit inside
        # [0, 1] for a while (a fresh GAN discriminator), sigmoid output always does.
        self.calls += 1
        if self.calls >= _LOOK and not self.hits:
            self.session.relax(self, "on_loss")  # no sigmoid output in 200 calls: sampled calls from now on
        if ev.name != "binary_cross_entropy_with_logits" or self.reported or not isinstance(ev.input, torch.Tensor):
            return
        op = made_by(ev.input)
        if op is None:
            return
        x = ev.input.detach()
        low, high = float(x.min()), float(x.max())
        if low < 0.0 or high > 1.0:
            return
        self.hits += 1
        self.low, self.high = min(self.low, low), max(self.high, high)
        if self.hits >= self.HITS:
            self.report(ev.where, {"made_by": op, "calls": self.hits, "min": self.low, "max": self.high},
                        count=self.hits, op=op, low=self.low, high=self.high)
