"""overfitting: the validation loss rises for several evaluations while the training loss keeps falling.

Evaluations are the losses computed with gradients off (``torch.no_grad`` / ``inference_mode``),
grouped into rounds (no ``backward()`` between them) and, inside a round, by the line that computed
them and the DataLoader they came from (a training-set evaluation and a validation one stay apart).
Each round's losses are summed on the device as they come; everything is read once at the end,
next to the training losses of the steps between the rounds.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_and_evaluation
from trainwell.doctor.events import LossEvent

MIN_RISES = 3  # evaluations after the best one that rose, and the last ones that must all stay above it
MAX_ROUNDS = 2000


@register
class Overfitting(Check):
    id = "overfitting"
    severity = "info"
    summary = "the validation loss rises for several evaluations while the training loss keeps falling"
    text = {
        "en": Text(
            title="The model is overfitting",
            message="The validation loss was lowest at evaluation {best} ({best_loss}) and has risen since, over "
                    "{after} more evaluations, to {last_loss}, while the training loss kept falling ({train_then} -> "
                    "{train_now}). The model is memorising the training data instead of learning what carries over "
                    "to new data, and every epoch after evaluation {best} makes it worse on new data.",
            fix="keep the weights of the best evaluation and stop when it stops improving (early stopping), and "
                "regularise: more data or data augmentation, weight decay (torch.optim.AdamW(model.parameters(), "
                "lr=1e-3, weight_decay=0.01)), Dropout, or a smaller model"),
        "zh": Text(
            title="模型过拟合了",
            message="验证损失在第 {best} 次评估时最低（{best_loss}），此后又评估了 {after} 次，"
                    "一路升到了 {last_loss}，而训练损失一直在下降（{train_then} -> {train_now}）。模型在死记训练数据，"
                    "而不是学习能推广到新数据的规律；第 {best} 次评估之后的每个 epoch 都让它在新数据上变差。",
            fix="保存评估最好时的权重，不再提升就停止训练（early stopping），并加正则化：更多数据或数据增强、"
                "权重衰减（torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)）、Dropout，或更小的模型"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        # Per evaluation round: (backward count, training losses before it, {source: [device sum, count]}).
        self.rounds: list[tuple[int, int, dict[Any, list[Any]]]] = []
        self.where: dict[Any, str | None] = {}

    @sampled_and_evaluation  # it reads evaluation losses alone (gradients off)
    def on_loss(self, ev: LossEvent) -> None:
        out = ev.output
        if torch.is_grad_enabled() or not isinstance(out, torch.Tensor) or out.numel() != 1:
            return
        s = self.session
        if not self.rounds or self.rounds[-1][0] != s.backward_count:
            if s.backward_count == 0 or len(self.rounds) >= MAX_ROUNDS:
                return  # nothing trained yet: a baseline, not an evaluation of training
            self.rounds.append((s.backward_count, len(s.loss_steps), {}))
        key = (ev.name, ev.where, s.batch_dataset)
        self.where.setdefault(key, ev.where)
        acc = self.rounds[-1][2].setdefault(key, [0.0, 0])
        acc[0] = acc[0] + out.detach().float().reshape(())  # on the device: no wait
        acc[1] += 1

    def on_end(self) -> None:
        if len(self.rounds) < MIN_RISES + 2:
            return
        losses = self.session.losses
        train = [losses[a:b] for (_, a, _), (_, b, _) in zip([(0, 0, {}), *self.rounds[:-1]], self.rounds)]
        train_means = [sum(t) / len(t) if t else None for t in train]
        for key in {k for _, _, d in self.rounds for k in d}:
            series = [(i, d[key]) for i, (_, _, d) in enumerate(self.rounds) if key in d]
            if len(series) < MIN_RISES + 2:
                continue
            device = series[0][1][0].device
            values = [v / n for v, (_, (_, n)) in zip(torch.stack([t.to(device) for _, (t, _) in series]).tolist(),
                                                      series)]
            if self._judge(key, [i for i, _ in series], values, train_means):
                return

    def _judge(self, key: Any, rounds: list[int], val: list[float], train: list[float | None]) -> bool:
        best = min(range(len(val)), key=val.__getitem__)
        after = val[best + 1:]
        rises = sum(b > a for a, b in zip(val[best:], after))
        t_then, t_now = train[rounds[best]], train[rounds[-1]]
        last = val[-MIN_RISES:]
        # Risen for good, not noise around a plateau: the last evaluations all clearly above the best one.
        if len(after) < MIN_RISES or rises < max(MIN_RISES, 0.4 * len(after)) or not val[best] > 0 \
                or min(last) < 1.05 * val[best] or sum(last) / len(last) < 1.1 * val[best]:
            return False
        if t_then is None or t_now is None or not t_now < 0.95 * t_then:
            return False
        self.report(self.where.get(key), {"validation_losses": [round(v, 4) for v in val[-50:]],
                                          "best_evaluation": best + 1, "evaluations": len(val),
                                          "rises_after_best": rises, "training_loss_at_best": round(t_then, 4),
                                          "training_loss_now": round(t_now, 4)},
                    best=best + 1, best_loss=val[best], after=len(after), last_loss=val[-1],
                    train_then=t_then, train_now=t_now)
        return True
