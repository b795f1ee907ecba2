"""frozen-batchnorm-training: a frozen part of the model whose BatchNorm layers are left in training mode.

Freezing with ``requires_grad=False`` (or running pretrained weights under ``torch.no_grad()``) stops the weights,
not their BatchNorm statistics: a BatchNorm layer in training mode overwrites its running mean and variance with
every batch it sees, so the frozen backbone's pretrained statistics drift to the new data (and to its small
batches), and at evaluation the layers normalize with statistics the frozen weights were never trained with.
Judged from the layers the model called on sampled steps (``leaf_calls``) and their mode, once some optimizer
trains something.
"""

from __future__ import annotations

import weakref

from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.events import ForwardEvent
from trainwell.doctor.where import user_name


@register
class FrozenBatchNormTraining(Check):
    id = "frozen-batchnorm-training"
    severity = "warning"
    summary = "BatchNorm layers of a frozen backbone left in training mode: their statistics drift although frozen"
    text = {
        "en": Text(
            title="A frozen backbone's BatchNorm layers are still in training mode",
            message="{count} BatchNorm layers of {model} ({names}) are frozen ({how}) but ran in training mode on "
                    "{hits} of the steps checked. Freezing stops the weights, not the statistics: in training mode "
                    "each batch overwrites a BatchNorm's running mean and variance, so the pretrained statistics "
                    "drift to this data and its batches, and the frozen weights after them end up seeing inputs "
                    "normalized differently from what they were trained on (worse with small batches).",
            fix="put the frozen part in eval mode, after each model.train(): {code}  "
                "# or m.eval() for each BatchNorm layer m of the frozen part"),
        "zh": Text(
            title="冻结的主干网络中的 BatchNorm 层仍处于训练模式",
            message="{model} 中有 {count} 个 BatchNorm 层（{names}）已被冻结（{how}），但在检查的步骤中有 {hits} 步"
                    "仍以训练模式运行。冻结只固定了权重，没有固定统计量：训练模式下每个批次都会改写 BatchNorm 的滑动均值和方差，"
                    "于是预训练得到的统计量逐渐漂移到当前数据和批次上，后面冻结的权重看到的输入与训练它们时的归一化方式不再一致"
                    "（批次越小越严重）。",
            fix="把冻结的部分切到 eval 模式（每次 model.train() 之后）：{code}  "
                "# 或者对冻结部分中的每个 BatchNorm 层 m 调用 m.eval()"),
    }
    HITS = 3  # sampled steps on which frozen BatchNorm layers ran in training mode

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.hits = 0
        self.last_step = -1
        self.names: weakref.WeakKeyDictionary[nn.Module, str] = weakref.WeakKeyDictionary()

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        s = self.session
        if self.reported or s.step < 1 or not ev.leaf_calls or not s.has_parameters(ev.module):
            return  # judged once something trains: a script that only runs a model is not fine-tuning
        norms = [m for m, _, _ in ev.leaf_calls if isinstance(m, _BatchNorm) and m.training
                 and m.track_running_stats and m.momentum is not None]  # (momentum None: update_bn, on purpose)
        if not norms:
            return
        if ev.grad_enabled:
            # Frozen layers: their own weight and bias take no gradient, in a model that otherwise trains.
            frozen = [m for m in norms if m.weight is not None and not m.weight.requires_grad]
            how = "requires_grad=False"
            if not frozen or not s.is_trained(ev.module):
                return
        else:
            # A model loaded from pretrained weights, run under no_grad in training mode while no optimizer trains
            # it: a frozen feature extractor. (A mean teacher, an EMA copy of the student, runs so on purpose and
            # was not loaded; a model that some optimizer trains is eval-mode-missing's business.)
            if s.is_trained(ev.module) or not s.loaded.holds(ev.module):
                return
            frozen, how = norms, "torch.no_grad()"
        if s.step != self.last_step:
            self.last_step = s.step
            self.hits += 1
        if self.hits >= self.HITS:
            names = [n for n, m in ev.module.named_modules() if any(m is f for f in frozen)]
            shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
            model = user_name(ev.module) or "model"
            part = self._frozen_part(ev.module, frozen, names) or model
            self.report(ev.where, {"model": type(ev.module).__name__, "batchnorm_layers": names[:20],
                                   "frozen_by": how, "steps_seen": self.hits},
                        count=len(frozen), model=type(ev.module).__name__, names=shown or "?", hits=self.hits,
                        how=how, code=f"{model}.train(); {part}.eval()" if part != model else f"{model}.eval()")

    @staticmethod
    def _frozen_part(model: nn.Module, frozen: list[nn.Module], names: list[str]) -> str | None:
        """The user's name for the frozen part: the model's common prefix of the layers' names (``model.backbone``)."""
        if not names:
            return None
        parts = [n.split(".") for n in names]
        common: list[str] = []
        for pieces in zip(*parts):
            if len(set(pieces)) != 1:
                break
            common.append(pieces[0])
        if len(common) == len(parts[0]):
            common = common[:-1]
        base = user_name(model) or "model"
        return base + "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in common) if common else None
