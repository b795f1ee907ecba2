"""dead-relu: most units of a ReLU layer output zero for every example, step after step.

A unit is one feature (dim 1) across the batch and any spatial dims; it is dead on a batch
when it is zero for all of it. Healthy networks have dead units too (a CNN trained with a high
learning rate can lose ~85 % of a layer's channels and still learn), so only layers where at
least 90 % of the units are dead (75 % while the loss has not improved on its start), on 3 of
the last 4 sampled steps after step 20, are reported.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import nn

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks._grads import read_back
from trainwell.doctor.events import ForwardEvent

if TYPE_CHECKING:
    from trainwell.doctor.session import Session


def dead_share(output: object) -> tuple[float, int] | None:
    """(share of units that are zero for the whole batch, number of units), or None when the output is too
    small to say (fewer than 8 units, or fewer than 16 values per unit)."""
    return dead_shares([output])[0]


def dead_shares(outputs: list[object]) -> list[tuple[float, int] | None]:
    """``dead_share`` of each output, read back from the device together (one wait, not one per ReLU)."""
    measured: list[tuple[int, int, torch.Tensor]] = []  # (position, units, units that are not silent)
    for i, output in enumerate(outputs):
        if not (isinstance(output, torch.Tensor) and output.is_floating_point() and output.ndim >= 2):
            continue
        units = int(output.shape[1])
        if units < 8 or output.numel() // units < 16:
            continue
        # A unit is zero for the whole batch when its largest absolute value is: three ops, a third of the time
        # of count_nonzero per unit (abs: an nn.ReLU subclass or a change made in place may leave values below
        # zero). NaN propagates through both and counts as alive: a network full of NaN is broken, not dead.
        out = output.detach().abs()
        top = out.flatten(2).amax(dim=(0, 2)) if out.ndim > 2 else out.amax(dim=0)
        measured.append((i, units, torch.count_nonzero(top)))
    shares: list[tuple[float, int] | None] = [None] * len(outputs)
    for (i, units, _), alive in zip(measured, read_back([n for _, _, n in measured])):
        shares[i] = ((units - int(alive)) / units, units)
    return shares


@register
class DeadRelu(Check):
    id = "dead-relu"
    severity = "warning"
    summary = "most units of a ReLU layer output zero for every input, step after step"
    text = {
        "en": Text(
            title="Dead ReLUs: {share} of a layer's units output zero for every input",
            general="Dead ReLUs: most of a layer's units output zero for every input",
            message="In ReLU layer #{layer} of the model ({units} units), {share} of the units were zero for every "
                    "example of the batch on {count} of the last {last} checked steps. A dead unit gets no "
                    "gradient, so it never comes back: the layer has lost most of its capacity. Usual causes: a "
                    "large negative bias initialisation, or a learning rate so high that one update pushed the "
                    "units into the negative range.",
            fix="initialise biases at zero and lower the learning rate, or use a leaky activation: "
                "nn.init.zeros_(layer.bias)  # or nn.LeakyReLU(0.01) instead of nn.ReLU()"),
        "zh": Text(
            title="ReLU 死亡：某层 {share} 的单元对所有输入都输出 0",
            general="ReLU 死亡：某层大部分单元对所有输入都输出 0",
            message="模型的第 {layer} 个 ReLU 层（{units} 个单元）中，有 {share} 的单元在最近 {last} 个检查步中的 {count} 步里"
                    "对整个批次的每个样本都输出 0。死掉的单元得不到梯度，再也不会恢复："
                    "这一层失去了大部分容量。常见原因：偏置初始化成很大的负数，或者学习率太大，一次更新就把单元推到了负区间。",
            fix="把偏置初始化为 0 并调小学习率，或改用带泄漏的激活函数："
                "nn.init.zeros_(layer.bias)  # 或用 nn.LeakyReLU(0.01) 代替 nn.ReLU()"),
    }

    SHARE = 0.9  # dead share of a layer's units (healthy CNNs trained hard reach ~85 % in a layer), or...
    SHARE_STUCK = 0.75  # ...this share when the run ends with the loss no better than at its start
    STUCK = 0.9  # "no better": the last 10 losses average at least this fraction of the first 3
    SEEN = 3  # sampled steps at or above the share, among...
    LAST = 4  # ...the last this many sampled steps
    MIN_STEP = 20  # a layer may start with dead units and recover in the first steps

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.history: dict[tuple[int, int], list[tuple[int, float]]] = {}  # (model id, ReLU call #) -> (step, share)
        self.where: dict[tuple[int, int], tuple[str | None, int]] = {}  # key -> (model call's line, units)
        self.trained: set[int] = set()  # ids of models some optimizer trains (checked until true)

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.reported or not ev.leaf_calls or not ev.grad_enabled or not self.session.sampled:
            return
        model = ev.module
        if id(model) not in self.trained:
            if not self.session.optimizers or not self.session.has_parameters(model) or not self.session.is_trained(model):
                return  # a frozen teacher, or before any step: not this run's training
            self.trained.add(id(model))
        step = self.session.step
        relus = [out for module, _, out in ev.leaf_calls if isinstance(module, nn.ReLU)] + ev.functional_relus
        for i, measured in enumerate(dead_shares(relus)):
            if measured is None:
                continue
            share, units = measured
            history = self.history.setdefault((id(model), i), [])
            if history and history[-1][0] == step:  # several forwards in one step: keep the smallest share
                share = min(share, history.pop()[1])
            history.append((step, share))
            del history[: -self.LAST]
            if (id(model), i) not in self.where:  # (the model call's line: found once, it walks the stack)
                self.where[(id(model), i)] = (ev.where, units)
            if step >= self.MIN_STEP and self.judge((id(model), i), self.SHARE):
                return

    def on_end(self) -> None:
        # A network that died early never learns: judged on the whole run, since healthy ones often sit on a
        # plateau for their first steps while many units are silent.
        losses = self.session.losses
        if self.reported or len(losses) < 50 or not all(map(math.isfinite, losses[-10:])):
            return
        start = sum(losses[:3]) / 3
        if start > 0 and sum(losses[-10:]) / 10 >= self.STUCK * start:
            for key, history in self.history.items():
                if history and history[-1][0] >= self.MIN_STEP and self.judge(key, self.SHARE_STUCK):
                    return

    def judge(self, key: tuple[int, int], threshold: float) -> bool:
        history = self.history[key]
        dead = [s for _, s in history if s >= threshold]
        if len(dead) < self.SEEN:
            return False
        where, units = self.where[key]
        self.report(where, {"dead_share": min(dead), "units": units, "relu_index": key[1] + 1,
                            "sampled_steps": len(dead)},
                    share=f"{min(dead):.0%}", units=units, layer=key[1] + 1, count=len(dead), last=len(history))
        return True

