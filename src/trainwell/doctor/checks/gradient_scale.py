"""exploding-gradients / vanishing-gradients: the size of the gradients, on sampled steps only.

Both look at the gradients the optimizer is about to use (``on_step_pre``), so gradient
clipping, which runs before ``optimizer.step()``, is already applied.
"""

from __future__ import annotations

import math
import statistics
import weakref
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks._grads import (optimizer_params, relative_changes, step_grad_norms,
                                           watched_optimizer_params)
from trainwell.doctor.checks.learning_rate import loss_classes, stalled_loss
from trainwell.doctor.events import BackwardEvent, ForwardEvent, LossEvent, StepEvent
from trainwell.doctor.lang import pick

if TYPE_CHECKING:
    from trainwell.doctor.session import Session


REMEDY = {
    "clip": ("clip the gradients before the step: torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)"
             "  # between loss.backward() and optimizer.step(); also consider a smaller init or learning rate",
             "在更新前裁剪梯度：torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)"
             "  # 放在 loss.backward() 和 optimizer.step() 之间；也可以减小初始化尺度或学习率"),
    # Clipping cannot help a forward pass that overflows before the first step: the scale of the weights must change.
    # (nonfinite-loss gives the same advice for the same finding.)
    "init": ("draw the weights at a scale that keeps the values steady through the layers and time steps: PyTorch's "
             "default init, nn.init.kaiming_normal_ for ReLU layers, nn.init.orthogonal_(rnn.weight_hh_l0) (or "
             "nn.init.eye_ for a ReLU RNN) for a recurrent matrix; for long sequences prefer nn.LSTM / nn.GRU",
             "用能让数值逐层、逐个时间步保持稳定的尺度初始化权重：PyTorch 的默认初始化、ReLU 层用 nn.init.kaiming_normal_、"
             "循环矩阵用 nn.init.orthogonal_(rnn.weight_hh_l0)（ReLU RNN 也可用 nn.init.eye_）；长序列优先用 nn.LSTM / nn.GRU"),
}


@register
class ExplodingGradients(Check):
    id = "exploding-gradients"
    severity = "error"
    summary = ("the gradient norm grows a thousandfold (or to inf/NaN) during training, or a too-large init makes "
               "the first loss and updates huge and the run never recovers")
    text = {
        "en": Text(
            title="Exploding gradients: {headline}",
            general="Exploding gradients: the gradient norm jumps by orders of magnitude",
            message="{story} Updates that large throw the weights far away: the network forgets what it learned, "
                    "its units die, or the next steps end in inf/NaN. Typical causes: a deep network with too large an initialisation, a learning rate that "
                    "is too high, unscaled targets, or an RNN trained without gradient clipping.",
            fix="{remedy}"),
        "zh": Text(
            title="梯度爆炸：{headline}",
            general="梯度爆炸：梯度范数猛增几个数量级",
            message="{story}这么大的更新会把权重甩得很远：网络忘掉已学到的东西、神经元“死掉”，或者接下来几步就变成 inf/NaN。"
                    "常见原因：深层网络的初始化过大、学习率过高、目标值没有缩放，或者 RNN 训练时没有做梯度裁剪。",
            fix="{remedy}"),
    }

    GROWTH = 1e3  # norm over the median of the first sampled norms
    FLOOR = 10.0  # an exploded norm is large in absolute terms too (tiny-init nets grow from 1e-6 to 1e-3)
    EARLY = 5  # sampled steps that make the early median
    BLOWUP = 1.0  # in the first steps, one update larger than the weights themselves (||dw|| / ||w||)...
    FIRST_STEPS = 10  # ...followed at once by an inf/NaN loss on finite data: the gradients exploded in one step
    # Or a network that starts out exploding: a first cross-entropy loss this many times ln(classes) (outputs
    # tens of units large: activations, and so gradients, grew layer by layer; a sound init starts near 1x)...
    START_LOSS = 10.0
    START_UPDATE = 0.1  # ...and first updates that move a weight matrix by this share of its size (Adam at 1e-3: 0.01)
    RAW_ABS, RAW_STD = 10.0, 5.0  # input on a raw scale (unnormalized-input's rule): the data, not the init, is why

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.early: dict[int, list[float]] = {}  # optimizer id -> first sampled norms
        self.last: dict[int, float] = {}  # optimizer id -> last sampled norm
        self.backward_since_step = False
        self.before: list[tuple[torch.Tensor, torch.Tensor]] = []  # a few weights before an early step
        self.before_mats: list[tuple[torch.Tensor, torch.Tensor]] = []  # the smallest weight matrices, likewise
        self.blowup: tuple[int, float, float, str | None] | None = None  # the last such step: (step, ||dw||/||w||,
        #                                                                  grad norm, where)
        self.norm = 0.0  # the gradient norm of the last sampled step
        self.classes = 0  # C of the first cross-entropy / NLL loss (0: the first loss was something else)
        self.first_norm = 0.0  # the gradient norm of the first step
        self.early_moves: list[float] = []  # ||dw|| / ||w|| of the first steps
        self.raw_input = False  # the first layer saw values on a raw scale in the first steps
        self.start: tuple[float, float, float, str | None] | None = None  # (first loss, ln C, update ratio, where)

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.session.step >= self.FIRST_STEPS or not ev.leaf_calls or not self.session.has_parameters(ev.module):
            return
        x = ev.leaf_calls[0][1]
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() >= 16:
            xd = x.detach()
            self.raw_input |= float(xd.abs().max()) > self.RAW_ABS and float(xd.float().std()) > self.RAW_STD

    @sampled_only
    def on_loss(self, ev: LossEvent) -> None:
        if self.session.step == 0 and self.session.backward_count == 0 and not self.classes:
            self.classes = loss_classes(ev)

    @sampled_only
    def on_step_pre(self, ev: StepEvent) -> None:
        fresh, self.backward_since_step = self.backward_since_step, False
        if self.reported or not fresh or not self.session.sampled:
            return
        losses = self.session.losses
        if not losses or not math.isfinite(losses[-1]):
            return  # an inf/NaN loss is lr-too-high's or the data's story, not the gradients'
        norm = self.norm = math.sqrt(math.fsum(n * n for n in step_grad_norms(ev).values()))  # all of them together
        if self.session.step == 0:
            self.first_norm = norm
        if self.session.step < self.FIRST_STEPS:
            self.before = [(p, p.detach().clone()) for p in watched_optimizer_params(ev.optimizer)]
            mats = [p for p in optimizer_params(ev.optimizer) if p.ndim >= 2 and p.grad is not None]
            self.before_mats = [(p, p.detach().clone()) for p in sorted(mats, key=lambda t: t.numel())[:4]]
        key = id(ev.optimizer)
        early = self.early.setdefault(key, [])
        base = statistics.median(early) if len(early) >= 2 else 0.0
        if math.isfinite(norm):
            if base > 0 and norm >= self.GROWTH * base and norm >= self.FLOOR:
                self.fire(ev, norm, base)
            elif len(early) < self.EARLY:
                early.append(norm)
            self.last[key] = norm
        elif base > 0 and self.last.get(key, 0.0) >= 100 * base:
            # inf/NaN right after a steep rise; a NaN out of nowhere is a numerical bug (log(0), sqrt(0)).
            self.fire(ev, norm, base)

    @sampled_only
    def on_step(self, ev: StepEvent) -> None:
        before, self.before = self.before, []
        mats, self.before_mats = self.before_mats, []
        if not before:
            return
        ratio = max(relative_changes(before))
        if not math.isfinite(ratio) or ratio > self.BLOWUP:
            self.blowup = (self.session.step, ratio, self.norm, ev.where)
        if mats:
            self.early_moves.append(max(relative_changes(mats)))
        if len(self.early_moves) == 5:  # five steps in: enough to see whether the first updates were all too large
            self._judge_start(ev.where)

    def _judge_start(self, where: str | None) -> None:
        """A network that explodes from its initialization: the very first loss is far above what guessing
        scores, and the first updates are large. Kept for the end of the run, which tells whether it cost
        anything (at 1.5x Kaiming's scale through 8 ReLU layers, a third of the accuracy, with nothing becoming
        inf/NaN: the gradients shrink again as the first updates wreck the network, so the thousandfold rise
        never comes; at 1.25x the run recovers)."""
        s = self.session
        losses = s.losses
        if (self.reported or self.classes < 2 or self.raw_input or s.nonfinite_data or not losses
                or not all(map(math.isfinite, losses)) or not all(map(math.isfinite, self.early_moves))):
            return
        first, chance = losses[0], math.log(self.classes)
        moved = statistics.median(self.early_moves)
        if first >= self.START_LOSS * chance and first >= self.START_LOSS and moved >= self.START_UPDATE:
            self.start = (first, chance, moved, where)

    END_SHARE = 0.4  # ...and the run ends with its loss still above this share of ln(classes): it never recovered

    def on_end(self) -> None:
        s = self.session
        if self.start is None or self.reported or s.nonfinite_data:
            return
        losses = s.losses
        n = len(losses)
        if n < 20 or not all(map(math.isfinite, losses[n - n // 4:])):
            return  # too short to tell, or an inf/NaN at the end: the other rules and checks say why
        first, chance, moved, where = self.start
        end = statistics.fmean(losses[n - n // 4:])
        if end < self.END_SHARE * chance:
            return  # it recovered from its start
        lang = s.lang
        self._report(where, {"first_loss": first, "chance_loss": chance, "first_grad_norm": self.first_norm,
                            "median_early_update_ratio": moved, "last_quarter_loss": end},
                    headline=pick(lang, f"the first loss was {first:.4g}, {first / chance:.0f}x what guessing "
                                          f"scores", f"第一个损失是 {first:.4g}，是随机猜测的 {first / chance:.0f} 倍"),
                    story=pick(lang,
                                 f"The first cross-entropy loss was {first:.4g}, against ln({self.classes}) = "
                                 f"{chance:.3g} for a model that gives every class the same probability: the "
                                 f"outputs start tens of units large, so the activations grow layer by layer, "
                                 f"and so do the gradients (norm {self.first_norm:.4g} at the first step). The "
                                 f"first updates changed a weight matrix by about {moved:.0%} of its size each, "
                                 f"and the run never recovered: its last quarter's loss averages {end:.4g}, "
                                 f"{end / chance:.0%} of what guessing scores.",
                                 f"第一个交叉熵损失是 {first:.4g}，而对每个类别给出相同概率的模型只有 ln({self.classes}) = "
                                 f"{chance:.3g}：网络一开始的输出就有几十那么大，激活值逐层放大，梯度也随之放大"
                                 f"（第一步的梯度范数为 {self.first_norm:.4g}）。最初几次更新每次都把某个权重矩阵改变了约 "
                                 f"{moved:.0%}，而且训练再也没有恢复：最后四分之一的平均损失为 {end:.4g}，"
                                 f"是随机猜测的 {end / chance:.0%}。"))

    @sampled_only
    def on_backward_pre(self, ev: BackwardEvent) -> None:
        """A loss before any update (the step nonfinite-loss calls ``overflow_start``) already overflowed inside the
        model: the initialization makes the values (and so the gradients) explode through the layers or time
        steps."""
        s, t = self.session, ev.tensor
        if (self.reported or s.step != 0 or s.nonfinite_data or self.raw_input
                or t.grad_fn is None or not t.is_floating_point() or t.numel() != 1 or math.isfinite(float(t.detach()))):
            return
        from trainwell.doctor.checks.nonfinite_loss import diagnose

        with torch.no_grad():
            cause, details = diagnose(t)
        if cause != "overflow":
            return
        op, largest = details["op"], details["largest"]
        self._report(ev.where, {"first_loss": str(float(t.detach())), "overflowed_in": op, "largest_finite": largest},
                    headline=pick(s.lang, "the untrained model's values overflow", "未经训练的模型数值就已溢出"),
                    story=pick(s.lang,
                               f"A loss before any optimizer step was {float(t.detach())}: `{op}` "
                               f"received values as large as {largest:.4g} from the model and overflowed. The "
                               f"initial weights multiply the scale at every layer or time step, so the values grow "
                               f"without bound in the forward pass, and the gradients through the same weights "
                               f"grow likewise in the backward pass.",
                               f"在任何一次优化器更新之前，损失就是 {float(t.detach())}：`{op}` 从模型收到的值大到 "
                               f"{largest:.4g}，发生了溢出。初始权重在每一层（或每个时间步）都把数值放大，前向传播中数值无限增长，"
                               f"反向传播经过同样的权重，梯度也同样爆炸。"), remedy="init")

    @sampled_only  # the step's own backward() comes before its sampled step()
    def on_backward(self, ev: BackwardEvent) -> None:
        self.backward_since_step = True
        if self.blowup is None or self.reported or self.session.step > self.FIRST_STEPS:
            return  # (the first steps are all sampled: reading the losses there costs nothing extra)
        losses = self.session.losses
        step, ratio, norm, where = self.blowup
        # The step that moved the weights by more than their size came right before this loss.
        if (losses and not math.isfinite(losses[-1]) and self.session.step == step + 1
                and not self.session.nonfinite_data and all(map(math.isfinite, losses[:-1]))):
            size_en, size_zh = ((f"{ratio:.3g} times their own size", f"其自身大小的 {ratio:.3g} 倍") if math.isfinite(ratio)
                                else ("into inf/NaN", "成了 inf/NaN"))
            self._report(where, {"grad_norm": norm, "update_ratio": ratio, "step": step + 1, "loss": str(losses[-1])},
                        headline=pick(self.session.lang, f"one update changed the weights {size_en}",
                                        f"一次更新把权重变{size_zh}"),
                        story=pick(self.session.lang,
                                     f"At step {step + 1} optimizer.step() applied a gradient of norm {norm:.4g}, which "
                                     f"changed the weights {size_en}, and the very next loss was {losses[-1]} although "
                                     f"the data is finite.",
                                     f"第 {step + 1} 步时，optimizer.step() 使用的梯度范数为 {norm:.4g}，把权重变{size_zh}，"
                                     f"紧接着的损失就变成了 {losses[-1]}，而数据都是有限值。"))

    def _report(self, where: str | None, evidence: dict[str, Any], *, headline: str, story: str,
                remedy: str = "clip") -> None:
        en, zh = REMEDY[remedy]
        self.report(where, evidence, headline=headline, story=story, remedy=pick(self.session.lang, en, zh))

    def fire(self, ev: StepEvent, norm: float, base: float) -> None:
        step, lang = self.session.step, self.session.lang
        self._report(ev.where, {"grad_norm": norm, "early_median_grad_norm": base, "growth": norm / base, "step": step},
                    headline=pick(lang, f"the gradient norm jumped from {base:.4g} to {norm:.4g}",
                                    f"梯度范数从 {base:.4g} 猛增到 {norm:.4g}"),
                    story=pick(lang, f"At step {step} the total gradient norm that optimizer.step() was about to "
                                       f"apply was {norm:.4g}, against {base:.4g} in the first steps, while the loss "
                                       f"was still finite.",
                                 f"第 {step} 步时，optimizer.step() 将要使用的梯度总范数为 {norm:.4g}，而最初几步只有 "
                                 f"{base:.4g}，此时损失仍是有限值。"))


def _weights_in_call_order(leaf_calls: list[tuple[nn.Module, object, object]]) -> list[torch.Tensor]:
    """The weight matrices / kernels of the leaf modules in the order they ran (embeddings left out:
    their gradients are sparse and small by nature)."""
    seen: set[int] = set()
    out: list[torch.Tensor] = []
    for module, _, _ in leaf_calls:
        if id(module) in seen or isinstance(module, (nn.Embedding, nn.EmbeddingBag)):
            continue
        seen.add(id(module))
        out += [p for p in module.parameters(recurse=False) if p.ndim >= 2]
    return out


@register
class VanishingGradients(Check):
    id = "vanishing-gradients"
    severity = "warning"
    summary = "the first layers get gradients 10,000x smaller than the last ones (100x in a run that stalls)"
    text = {
        "en": Text(
            title="Vanishing gradients: the first layers get almost no gradient",
            message="On {count} sampled steps in a row, the gradient of the first weight layer was {first}, "
                    "{ratio}x smaller than the last layer's ({last}). The signal shrinks at every layer on its "
                    "way back (saturating sigmoid/tanh activations, or a deep stack with too small an "
                    "initialisation), so the early layers practically never learn.",
            fix="use ReLU-family activations with He init, or add normalisation / residual connections: "
                "nn.Sequential(nn.Linear(n, n), nn.BatchNorm1d(n), nn.ReLU())  # not nn.Sigmoid() in every layer"),
        "zh": Text(
            title="梯度消失：前面几层几乎得不到梯度",
            message="连续 {count} 个采样步中，第一层权重的梯度为 {first}，比最后一层（{last}）小 {ratio} 倍。"
                    "信号在反向传播时每经过一层都在缩小（sigmoid/tanh 饱和，或者层数很深而初始化太小），"
                    "所以前面几层实际上学不到东西。",
            fix="改用 ReLU 类激活函数并配合 He 初始化，或加入归一化 / 残差连接："
                "nn.Sequential(nn.Linear(n, n), nn.BatchNorm1d(n), nn.ReLU())  # 代替每层都用 nn.Sigmoid()"),
    }

    RATIO = 1e-4  # first layer's norm at most this fraction of the last layer's...
    TINY = 1e-6  # ...and this small in absolute terms
    STREAK = 5  # sampled steps in a row
    MIN_STEP = 10  # and still so after the first steps; or
    RATIO_STUCK = 1e-2  # at most this fraction on the sampled steps up to the end (healthy MLPs: 5e-2 to 1)...
    STALLED = 0.9  # ...of a run whose last quarter's loss is still above this fraction of its first quarter's

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.order: weakref.WeakKeyDictionary[nn.Module, list[torch.Tensor]] = weakref.WeakKeyDictionary()
        self.where: weakref.WeakKeyDictionary[nn.Module, str | None] = weakref.WeakKeyDictionary()
        self.streak: dict[int, int] = {}
        # id(model) -> (sampled steps in a row at or under RATIO_STUCK, first norm, last norm, where)
        self.weak: dict[int, tuple[int, float, float, str | None]] = {}
        self.backward_since_step = False

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if ev.leaf_calls and ev.module not in self.order:
            weights = _weights_in_call_order(ev.leaf_calls)
            if len(weights) >= 3:  # "first" and "last" layers need a deep enough model
                self.order[ev.module] = weights
                self.where[ev.module] = ev.where

    @sampled_only  # the step's own backward() comes before its sampled step()
    def on_backward(self, ev: BackwardEvent) -> None:
        self.backward_since_step = True

    @sampled_only
    def on_step_pre(self, ev: StepEvent) -> None:
        fresh, self.backward_since_step = self.backward_since_step, False
        if self.reported or not fresh or not self.session.sampled or not self.order:
            return
        owned = {id(p) for p in optimizer_params(ev.optimizer)}
        for model, weights in list(self.order.items()):
            live = [p for p in weights if id(p) in owned and p.requires_grad and p.grad is not None]
            if len(live) < 3:
                continue
            found = step_grad_norms(ev)
            first, last = found[id(live[0])], found[id(live[-1])]
            key = id(model)
            weak = 0 < first <= self.RATIO_STUCK * last
            self.weak[key] = (self.weak[key][0] + 1 if weak and key in self.weak else int(weak), first, last,
                              self.where.get(model))
            if 0 < first < self.TINY and first <= self.RATIO * last:
                self.streak[key] = self.streak.get(key, 0) + 1
                if self.streak[key] >= self.STREAK and self.session.step >= self.MIN_STEP:
                    self._report(self.where.get(model), first, last, self.streak[key])
                    return
            else:
                self.streak[key] = 0

    def on_end(self) -> None:
        # Gradients merely 100x smaller at the front are common in healthy deep nets; with a run that got
        # nowhere they are why (a short stack of sigmoids stuck on its plateau).
        s = self.session
        if self.reported or s.step < self.MIN_STEP or stalled_loss(s.losses, self.STALLED) is None:
            return
        for count, first, last, where in self.weak.values():
            if count >= self.STREAK:
                self._report(where, first, last, count)
                return

    def _report(self, where: str | None, first: float, last: float, count: int) -> None:
        self.report(where, {"first_layer_grad_norm": first, "last_layer_grad_norm": last, "sampled_steps": count},
                    first=first, last=last, ratio=f"{last / first:.2g}", count=count)
