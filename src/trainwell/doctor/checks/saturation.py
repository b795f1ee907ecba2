"""saturated-activations: a sigmoid / tanh layer whose outputs sit at the flat ends of the curve
(within 0.01 of 0 / 1 or of -1 / 1), step after step: most of its units for most inputs of the batch,
or over a third of all its outputs.

A saturated unit passes back almost no gradient (the slope there is below 0.01), so the layers
before it stop learning. The activations are read from the autograd graph of a model call on
sampled steps (``SigmoidBackward`` / ``TanhBackward`` keep their output), so ``nn.Sigmoid``,
``torch.tanh`` and ``F.sigmoid`` all count. The model's output activation is left out: a
sigmoid output layer trained with BCE is meant to become confident. Fused kernels (``nn.LSTM``
on most builds) leave no such nodes, and their gates at initialisation are far from saturated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks._grads import read_back
from trainwell.doctor.events import ForwardEvent, LossEvent

if TYPE_CHECKING:
    from trainwell.doctor.session import Session

_KINDS = {"SigmoidBackward0": "sigmoid", "TanhBackward0": "tanh"}
MAX_NODES = 400  # bound on the graph walk from the model's output


def _outputs(x: Any) -> list[torch.Tensor]:
    """The tensors a model call returned (a tensor, or a tuple / list / dict of them)."""
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _outputs(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _outputs(v)]
    return []


def activations(outputs: list[torch.Tensor]) -> list[tuple[str, torch.Tensor]]:
    """(kind, saved output) of the sigmoid / tanh operations behind ``outputs``, nearest the output first."""
    roots = [t.grad_fn for t in outputs if t.grad_fn is not None]
    seen = {id(r) for r in roots}
    queue, found, head = list(roots), [], 0
    while head < len(queue) and head < MAX_NODES:
        fn = queue[head]
        head += 1
        kind = _KINDS.get(type(fn).__name__)
        if kind is not None:
            saved = getattr(fn, "_saved_result", None)
            if isinstance(saved, torch.Tensor):
                found.append((kind, saved))
        for child, _ in getattr(fn, "next_functions", ()):
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                queue.append(child)
    return found


UNIT_FLAT = 0.6  # a unit is saturated when at least this share of its outputs on the batch is at the flat ends
#                   (either end: a unit flipping between 0 and 1 passes no more gradient than one stuck at 1)


def saturated_share(kind: str, out: torch.Tensor) -> tuple[float, int, float] | None:
    """(share of saturated units, number of units, share of all the outputs at the flat ends); None when the
    tensor is too small to say (fewer than 8 samples or 4 units). Units: dim 1 (features, channels), the last
    dim for 3-D sequences."""
    if out.ndim < 2 or out.shape[0] < 8 or not out.is_floating_point():
        return None
    x = out.detach()
    flat = (x - 0.5).abs() >= 0.49 if kind == "sigmoid" else x.abs() >= 0.99
    if flat.ndim == 3:
        flat = flat.permute(0, 2, 1)  # (batch, seq, features): the features are the units
    units = int(flat.shape[1])
    if units < 4:
        return None
    per_unit = flat.transpose(0, 1).reshape(units, -1).float().mean(dim=1)
    unit_share, output_share = read_back([(per_unit >= UNIT_FLAT).float().mean(), per_unit.mean()])  # one wait
    return unit_share, units, output_share


@register
class SaturatedActivations(Check):
    id = "saturated-activations"
    severity = "warning"
    summary = "a sigmoid / tanh layer's outputs sit at its flat ends (near 0/1 or ±1): most units, or a third of all"
    text = {
        "en": Text(
            title="Saturated {kind} units: {outputs} of a layer's outputs sit at the ends of the curve",
            general="Saturated sigmoid / tanh units: much of a layer's output sits at the ends of the curve",
            message="In the {kind} layer #{layer} of the model ({units} units), {outputs} of the outputs on the batch "
                    "are within 0.01 of {ends}, and {share} of the units stay there for most examples, on {count} "
                    "checked steps in a row. There the curve is flat: its slope is below 0.01, so almost no gradient "
                    "flows back through these units and the layers before them stop learning. The pre-activations "
                    "are far too large: usually inputs on a raw scale (not normalized), or weights initialised too "
                    "large.",
            fix="normalize the inputs and use the default (or Xavier) initialisation: x = (x - x.mean(0)) / "
                "x.std(0)  # and nn.init.xavier_uniform_(layer.weight, gain=nn.init.calculate_gain('{kind}'))"),
        "zh": Text(
            title="{kind} 单元饱和：某层 {outputs} 的输出落在曲线两端",
            general="sigmoid / tanh 单元饱和：某层很大一部分输出落在曲线两端",
            message="模型的第 {layer} 个 {kind} 层（{units} 个单元）中，连续 {count} 个检查步里，"
                    "批次上 {outputs} 的输出都在 {ends} 的 0.01 以内，{share} 的单元对大多数样本都停在那里。"
                    "曲线在那里是平的：斜率小于 0.01，"
                    "几乎没有梯度能穿过这些单元传回去，前面的层就学不动了。激活前的值太大了：通常是输入没有归一化（原始尺度），"
                    "或者权重初始化得太大。",
            fix="把输入归一化，并使用默认（或 Xavier）初始化：x = (x - x.mean(0)) / x.std(0)  "
                "# 以及 nn.init.xavier_uniform_(layer.weight, gain=nn.init.calculate_gain('{kind}'))"),
    }

    SHARE = 0.5  # most of the layer's units, or...
    OUTPUTS = 0.35  # ...this share of all its outputs (units half saturated each: 3-4 points of accuracy lost on
    #                 digits behind three tanh layers at 6x the default init; at 4x, 15 % of the outputs, 1-2 points)
    STREAK = 5  # ...on this many checked steps in a row (the first 10 steps are all checked)...
    UNTIL = 100  # ...starting in the first steps: a bad input scale or init shows at once, and a long healthy run
    #              that grows confident later is left alone

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.streaks: dict[tuple[Any, int], int] = {}  # (model id or loss line, layer #) -> saturated steps in a row

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if ev.grad_enabled:
            self.judge(id(ev.module), _outputs(ev.output), ev)

    @sampled_only
    def on_loss(self, ev: LossEvent) -> None:
        # Networks written as plain functions over tensors make no model call: their graph is reached from the loss.
        if torch.is_grad_enabled() and not self.session.models:
            self.judge(ev.site, _outputs(ev.input), ev)

    def judge(self, source: Any, outputs: list[torch.Tensor], ev: ForwardEvent | LossEvent) -> None:
        """``ev``: the event, whose ``where`` (a walk up the stack) is read only when reporting."""
        if self.reported or (self.session.step >= self.UNTIL and not self.streaks):
            return
        final = {t.numel() for t in outputs}
        found = [(k, o) for k, o in activations(outputs) if o.numel() not in final]  # the output layer is left out
        layers = list(reversed(found))  # input side first, as the user counts layers
        for i, (kind, out) in enumerate(layers):
            measured = saturated_share(kind, out)
            if measured is None:
                continue
            share, units, outputs = measured
            key = (source, i)
            streak = self.streaks.get(key, 0) + 1 if share >= self.SHARE or outputs >= self.OUTPUTS else 0
            if streak:
                self.streaks[key] = streak
            else:
                self.streaks.pop(key, None)
            if streak >= self.STREAK:
                ends = "0 or 1" if kind == "sigmoid" else "-1 or 1"
                self.report(ev.where, {"kind": kind, "layer": i + 1, "units": units, "saturated_share": share,
                                       "flat_outputs_share": outputs, "steps": streak},
                            kind=kind, layer=i + 1, units=units, share=f"{share:.0%}", outputs=f"{outputs:.0%}",
                            count=streak,
                            ends=ends if self.session.lang != "zh" else ends.replace(" or ", " 或 "))
                return
