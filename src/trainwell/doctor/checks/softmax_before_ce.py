"""softmax-before-cross-entropy: probabilities, not logits, passed to cross-entropy / NLL."""

from __future__ import annotations

import torch

from trainwell.doctor.check import Check, Text, register, sampled_and_evaluation
from trainwell.doctor.events import LossEvent


def looks_like_probabilities(x: torch.Tensor) -> bool:
    """Rows (dim 1) all >= 0 and summing to 1: what softmax produces."""
    if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.ndim >= 2 and x.shape[1] > 1):
        return False
    x = x.detach()
    return bool((x >= 0).all()) and bool(torch.allclose(x.sum(dim=1), torch.ones((), dtype=x.dtype), atol=1e-3))


@register
class SoftmaxBeforeCrossEntropy(Check):
    id = "softmax-before-cross-entropy"
    severity = "error"
    summary = "probabilities (softmax output) passed to CrossEntropyLoss / NLLLoss, which expect logits / log-probs"
    text = {
        "en": Text(
            title="Softmax output passed to {loss}",
            general="Softmax output passed to cross_entropy or nll_loss",
            message="The values given to {loss} are probabilities (every row is >= 0 and sums to 1). {loss} "
                    "applies log-softmax itself, so softmax is applied twice: the loss flattens out and the model "
                    "learns slowly or stalls.",
            fix="return the raw scores (logits) from the model and remove the softmax before the loss: "
                "loss = F.cross_entropy(model(x), y)  # apply softmax only when you need probabilities"),
        "zh": Text(
            title="把 softmax 的输出传给了 {loss}",
            general="把 softmax 的输出传给了 cross_entropy 或 nll_loss",
            message="传给 {loss} 的值是概率（每行 >= 0 且和为 1）。{loss} 自己会做 log-softmax，"
                    "等于做了两次 softmax：损失变得平坦，模型学得很慢甚至不动。",
            fix="模型直接输出原始分数（logits），去掉损失之前的 softmax：loss = F.cross_entropy(model(x), y)"
                "  # 需要概率时再单独做 softmax"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.hits = 0
        self.evaluated_at = -1  # the step of the last evaluation loss looked at

    @sampled_and_evaluation  # training losses on sampled steps; an evaluation loss wherever it falls
    def on_loss(self, ev: LossEvent) -> None:
        """Training losses on sampled steps (the model's last layer is the same on every step); an evaluation loss
        (gradients off) once per step wherever it falls, since a validation pass between sampled steps is where a
        softmax added only for evaluation shows (its first batch is enough)."""
        if self.reported or ev.name not in ("cross_entropy", "nll_loss"):
            return
        session = self.session
        if not session.sampled:
            if torch.is_grad_enabled() or self.evaluated_at == session.step:
                return
            self.evaluated_at = session.step
        if looks_like_probabilities(ev.input):
            self.hits += 1
            if self.hits >= 2:
                name = "CrossEntropyLoss" if ev.name == "cross_entropy" else "NLLLoss"
                self.report(ev.where, {"row_sums": 1.0, "min_value": float(ev.input.detach().min())}, loss=name)
