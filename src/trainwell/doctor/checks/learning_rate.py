"""lr-too-high / lr-too-low / loss-not-decreasing: judged from the loss curve and the size of the updates.

All three read ``session.losses`` (every scalar loss ``backward()`` was called on) and the
learning rate from the optimizer's ``param_groups``. Runs with two optimizers (GANs) and
losses that go negative are left alone where their curves do not mean what these rules assume.
"""

from __future__ import annotations

import math
import statistics
import sys
import weakref
from typing import TYPE_CHECKING, Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks._grads import change_norms, norms, step_grad_norms
from trainwell.doctor.events import BackwardEvent, ForwardEvent, LossEvent, StepEvent
from trainwell.doctor.checks._loss_jumps import LabelMix, unsettled
from trainwell.doctor.checks._names import UserNames
from trainwell.doctor.checks.shuffling import class_targets
from trainwell.doctor.lang import pick, told

if TYPE_CHECKING:
    from trainwell.doctor.session import Session

# Optimizers whose step size does not grow with the gradient (per-weight adaptive, sign-based, quasi-Newton): how
# fast the loss grew says nothing about how much smaller their rate must be.
_ADAPTIVE = (torch.optim.Adam, torch.optim.AdamW, torch.optim.Adamax, torch.optim.NAdam, torch.optim.RAdam,
             torch.optim.RMSprop, torch.optim.Adagrad, torch.optim.Adadelta, torch.optim.Rprop,
             torch.optim.SparseAdam, torch.optim.LBFGS)


def current_lr(optimizer: torch.optim.Optimizer) -> float:
    """The largest learning rate among the optimizer's parameter groups."""
    return max(float(g.get("lr", 0.0)) for g in optimizer.param_groups)


def optimizer_call(optimizer: torch.optim.Optimizer, lr: float, names: UserNames | None = None) -> str:
    """``opt = torch.optim.Adam(net.parameters(), lr=0.001)`` for the fix line, in the user's names when known."""
    names = names or UserNames()
    return f"{names.optimizer} = torch.optim.{type(optimizer).__name__}({names.params}, lr={lr:.2g})"


# The learning rate each optimizer's own scale starts from: its default where that is what people use, else the
# rate most setups start from. Every learning-rate judgement is made against this scale, not one number for all:
# Adadelta's lr multiplies an update that is already adapted (default 1.0), LBFGS takes quasi-Newton steps
# (default 1, with or without line search), Rprop's lr is only each weight's first step.
USUAL_LR: tuple[tuple[type[torch.optim.Optimizer], float], ...] = (
    (torch.optim.Adadelta, 1.0),
    (torch.optim.LBFGS, 1.0),
    (torch.optim.Adagrad, 1e-2),
    (torch.optim.Rprop, 1e-2),
    (torch.optim.SparseAdam, 1e-3),
    (torch.optim.Adamax, 2e-3),
    (torch.optim.ASGD, 1e-2),
    (torch.optim.Adam, 1e-3), (torch.optim.AdamW, 1e-3), (torch.optim.NAdam, 1e-3), (torch.optim.RAdam, 1e-3),
    (torch.optim.RMSprop, 1e-3),
    (torch.optim.SGD, 1e-2),
)


def usual_lr(optimizer: torch.optim.Optimizer) -> float:
    """The learning rate most setups of this optimizer start from (1e-2 for one not in ``USUAL_LR``)."""
    return next((lr for cls, lr in USUAL_LR if isinstance(optimizer, cls)), 1e-2)


def _nice_below(x: float) -> float:
    """The largest of 1, 2, 5 times a power of ten that is not above ``x``."""
    if x <= 0 or not math.isfinite(x):
        return x
    power = 10.0 ** math.floor(math.log10(x))
    return next(m * power for m in (5, 2, 1) if m * power <= x * (1 + 1e-9))


def loss_classes(ev: LossEvent) -> int:
    """C, the number of classes, of a cross-entropy / NLL loss on (N, C, ...) scores; 0 for any other loss."""
    x = ev.input
    if ev.name in ("cross_entropy", "nll_loss") and isinstance(x, torch.Tensor) and x.ndim >= 2:
        return int(x.shape[1])
    return 0


def all_finite(x: Any) -> bool:
    """False only for a floating tensor that holds inf/NaN."""
    return not (isinstance(x, torch.Tensor) and x.is_floating_point() and not bool(torch.isfinite(x).all()))


# Why a loss that never settles points at the learning rate, and what to do (lr-too-high's "jumps" / "relapse").
SETTLE = ("The batches held as many different classes as shuffled data does, so this does not come from the order "
          "of the data: with learning rate {lr} the updates keep overshooting, each one undoes part of what the "
          "others learned, and the model ends worse than it could.",
          "各批次包含的类别数和打乱后的数据一样多，所以这不是数据顺序造成的：学习率为 {lr} 时更新一次次越过最小值，"
          "每一步都抵消掉其他步学到的一部分，模型最终比本来能达到的要差。")


@register
class LrTooHigh(Check):
    id = "lr-too-high"
    severity = "error"
    summary = ("the loss blows up (rises far above its start, or becomes inf/NaN) in the first steps, or never "
               "settles in a run whose batches mix the classes (it keeps jumping to twice its recent "
               "level, or back above its start, to the end)")
    text = {
        "en": Text(
            title="The learning rate {lr} is too high: {headline}",
            general="The learning rate is too high: the loss blows up or never settles",
            message="{story}",
            fix="{remedy}: {call}"),
        "zh": Text(
            title="学习率 {lr} 太大：{headline}",
            general="学习率太大：损失爆炸或始终稳定不下来",
            message="{story}",
            fix="{remedy}：{call}"),
    }
    # The two ways a too-high rate shows: the loss blows up early, or it never settles (see _loss_jumps).
    WORDS = {
        "blowup": {
            "headline": ("the loss blows up", "损失爆炸"),
            "story": ("Within the first {steps} optimizer steps the loss went from {start} to {value}, although the "
                      "inputs were finite. With learning rate {lr} each update overshoots the minimum, so the loss "
                      "grows instead of shrinking (and then the weights become inf/NaN or the network dies).",
                      "在最初的 {steps} 次优化器更新内，损失从 {start} 变成了 {value}，而输入都是有限值。"
                      "学习率为 {lr} 时每次更新都越过了最小值，损失不降反升（随后权重变成 inf/NaN，或者网络“死掉”）。"),
        },
        "jumps": {
            "headline": ("the loss never settles", "损失始终稳定不下来"),
            "story": ("In the last quarter of the run, {count} of {checked} losses ({share}) jumped to over 2x the "
                      "median of the 20 losses before them and to at least a quarter of the starting loss ({start}), "
                      "as high as {value}. {settle}",
                      "在训练的最后四分之一里，{checked} 个损失中有 {count} 个（{share}）跳到了它前面 20 个损失中位数的 "
                      "2 倍以上，并且至少达到起始损失（{start}）的四分之一，最高达到 {value}。{settle}"),
        },
        "relapse": {
            "headline": ("the loss never settles", "损失始终稳定不下来"),
            "story": ("In the second half of the run, {count} of {checked} losses jumped to over 2x the median of "
                      "the 20 losses before them and above the very first one ({start}), as high as {value}: on "
                      "those batches the model was worse than before it trained. {settle}",
                      "在训练的后半段，{checked} 个损失中有 {count} 个跳到了它前面 20 个损失中位数的 2 倍以上，"
                      "并且比最初的损失（{start}）还高，最高达到 {value}："
                      "在这些批次上模型比训练之前还差。{settle}"),
        },
    }

    WINDOW = 10  # losses smoothed together (geometric mean: one spike alone cannot trip the rule)
    GROWTH = 3.0  # before an inf/NaN loss, some loss this many times the start (growth, not log(0))
    RISE = 5.0  # smoothed loss above this many times the start (deep nets without warm-up reach ~4x)...
    HITS = 5  # ...at this many points; or
    SPIKE = 15.0  # one loss this many times the start, and another one...
    SPIKE2 = 5.0  # ...this many times (healthy runs stay under ~8x; a too-high lr spikes 20-1000x); or
    JUMP = 3.0  # a loss this many times the start, and the run never gets below the start again, or...
    JUMP_END = 0.6  # ...two losses that high, and the run ends no lower than this fraction of the start
    MAX_STEPS = 200  # only the start of training is judged
    SETTLE_SCALE = 3.0  # a loss that never settles is the rate's doing only at this many times the optimizer's
    #                     usual rate or more (the sweeps: Adam at 30x; at its own scale, e.g. Adadelta at 1.0, the
    #                     jumps of a noisy run are the data's)
    MAX_CUT = 100.0  # the most the measured growth of a blow-up is taken to call for
    FELL = 0.98  # a rate the loss was seen to fall at: the last losses at it below this share of the first ones

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.first: list[float] = []  # the first WINDOW losses
        self.window: list[float] = []
        self.top = [0.0, 0.0]  # the two largest finite losses after the first step
        self.top_step = 0
        self.hits = 0
        self.terms = 0  # elements averaged by the starting loss: few means a noisy start
        self.last_input: Any = None
        self.last_target: Any = None
        self.optimizers: set[int] = set()
        self.opt: torch.optim.Optimizer | None = None
        self.step_where: str | None = None
        self.n_losses = 0
        self.off = False  # no scale to judge: negative losses, no finite start, an inf/NaN seen, a GAN
        self.mix = LabelMix()  # the classes of training batches, on sampled steps (for the jumps at the end)
        self.rates: list[tuple[int, float]] = []  # (step, learning rate) each time a sampled step saw it change
        self.names = UserNames()  # the user's names for the optimizer and what it trains (for the fix)
        self.named: Any = None  # a weak reference to the optimizer ``names`` are for

    def on_forward(self, ev: ForwardEvent) -> None:
        # The model's input; loss modules (no parameters) get the model's output, which may be inf.
        if self.session.step > self.MAX_STEPS:
            # Past the start the losses are judged no more (on_end's look needs only a recent batch and the
            # optimizers, which sampled steps show): the steps in between cost nothing.
            self.session.relax(self, "on_forward", "on_loss", "on_step")
            return
        if not (ev.grad_enabled and ev.inputs):
            return
        if self.session.has_parameters(ev.module):
            self.last_input = ev.inputs[0]

    def on_loss(self, ev: LossEvent) -> None:
        if isinstance(ev.target, torch.Tensor):
            self.last_target = ev.target
            if not self.first:  # the starting loss's batch (a short last batch must not change it)
                self.terms = ev.target.numel()
        if self.session.sampled and isinstance(ev.input, torch.Tensor) and ev.input.requires_grad:
            targets = class_targets(ev)
            weighted = any(ev.kwargs.get(k) is not None for k in ("weight", "pos_weight"))
            if targets is None or weighted:
                # A training loss without class targets, or with class weights (a batch holding a rare class
                # weighs many times more): the jumps are not judged.
                self.mix.off = True
            else:
                self.mix.add(targets)

    def on_step(self, ev: StepEvent) -> None:
        opt = ev.optimizer
        self.optimizers.add(id(opt))
        self.opt = opt
        if self.step_where is None or self.session.sampled:  # finding the line walks the stack: not every step
            self.step_where = ev.where
            lr = current_lr(opt)
            if not self.rates or self.rates[-1][1] != lr:
                self.rates.append((self.session.step, lr))
            if isinstance(opt, torch.optim.LBFGS) and opt.defaults.get("line_search_fn") is not None:
                # Its losses include the line search's trial points, and the search only accepts steps that
                # lower the loss: the curve is not a rate's to judge.
                self.off = True
            if self.named is None or self.named() is not opt:
                self.names = UserNames.of(sys._getframe(), opt)
                self.named = weakref.ref(opt)

    @sampled_only  # the losses since the last sampled step are read back together: other steps never wait
    def on_backward(self, ev: BackwardEvent) -> None:
        if self.off or self.reported or self.session.step > self.MAX_STEPS:
            return
        losses, steps = self.session.losses, self.session.loss_steps
        new, self.n_losses = range(self.n_losses, len(losses)), len(losses)
        for i in new:
            if self.off or self.reported or steps[i] > self.MAX_STEPS:
                return
            self.judge(ev, losses[i], steps[i])

    def judge(self, ev: BackwardEvent, v: float, step: int) -> None:
        """One more loss ``v``, of optimizer step ``step``."""
        if (math.isfinite(v) and v < 0) or not (self.first or (math.isfinite(v) and v > 0)):
            self.off = True  # a loss that goes negative (RL, likelihoods), or no positive finite start
            return
        if len(self.first) < self.WINDOW and math.isfinite(v):
            self.first.append(v)
        base = self.baseline()
        if not math.isfinite(v):
            self.off = True  # everything after the first inf/NaN says nothing more
            # Growth first (not a sudden NaN from log(0) or sqrt(0)) and finite data: the steps did it.
            if step >= 1 and self.top[0] >= self.GROWTH * base and self.inputs_finite():
                self.fire(ev.where, v, step)
            return
        if step < 1:
            return  # nothing updated yet
        if len(self.optimizers) > 1:
            self.off = True  # two optimizers (a GAN): their losses rise and fall by design
            return
        if v > self.top[0]:
            self.top_step = step
        self.top = sorted([*self.top, v], reverse=True)[:2]
        if self.terms >= 16 and self.top[0] >= self.SPIKE * base and self.top[1] >= self.SPIKE2 * base:
            if self.inputs_finite():
                self.fire(ev.where, self.top[0], self.top_step)
            return
        self.window = (self.window + [v])[-self.WINDOW:]
        if len(self.window) == self.WINDOW and min(self.window) > 0:
            smooth = math.exp(sum(math.log(x) for x in self.window) / self.WINDOW)
            if smooth > self.RISE * base:
                self.hits += 1
                if self.hits >= self.HITS and self.inputs_finite():
                    self.fire(ev.where, smooth, step)

    def on_end(self) -> None:
        # A jump, then the network died (dead ReLUs, saturated units): the loss never beats its start again,
        # or, when it jumped twice, never gets far below it (most of the units died, the rest limp on).
        losses = self.session.losses
        if (self.off or self.reported or self.terms < 16 or len(self.optimizers) > 1
                or self.session.step < 50 or len(losses) < 50):
            return
        tail = losses[-20:]
        base = self.baseline()
        end = 0.95 if self.top[1] < self.JUMP * base else self.JUMP_END
        if (self.top[0] >= self.JUMP * base and all(map(math.isfinite, tail))
                and statistics.fmean(tail) >= end * base and self.inputs_finite()):
            self.fire(None, self.top[0], self.top_step)
        elif self.mix.mixed() and current_lr(self.opt) >= self.SETTLE_SCALE * usual_lr(self.opt):
            # (cheap, and off for every run without class targets or at the optimizer's own scale: before the scan)
            found = unsettled(losses, base)
            if found is not None and self.inputs_finite():
                self.fire(None, found.highest, self.session.step, found.form, count=found.count,
                          checked=found.checked, share=f"{found.count / found.checked:.0%}")

    def baseline(self) -> float:
        """The loss before training moved it: the very first loss, or, when single losses are noisy (fewer
        than 16 averaged terms, e.g. batch size 1), the larger of it and the median of the first ones."""
        if self.terms >= 16:
            return self.first[0]
        return max(self.first[0], statistics.median(self.first))

    def inputs_finite(self) -> bool:
        return all_finite(self.last_input) and all_finite(self.last_target)

    def fire(self, where: str | None, value: float, step: int, form: str = "blowup", **values: Any) -> None:
        if self.opt is None:
            return
        lr = current_lr(self.opt)
        if lr <= 0:
            return
        start, steps = self.baseline(), max(step, 1)
        shown = {"lr": f"{lr:.4g}", "start": f"{start:.4g}", "value": f"{value:.4g}", "steps": steps, **values}
        settle = pick(self.session.lang, *SETTLE).format(**shown)
        words = told(self.session.lang, self.WORDS[form], settle=settle, **shown)
        peak = value if math.isfinite(value) else max(self.top[0], start)
        new, basis = self.suggest(lr, peak / start, steps, form)
        usual = usual_lr(self.opt)
        name = type(self.opt).__name__
        lang = self.session.lang
        if lr > usual * 1.001:
            scale = pick(lang, f" {lr:.4g} is {lr / usual:.3g}x the rate {name} is usually run at ({usual:g}).",
                         f"{lr:.4g} 是 {name} 常用学习率（{usual:g}）的 {lr / usual:.3g} 倍。")
        else:  # at the optimizer's own scale or below: the data's scale makes the steps too big
            scale = pick(lang, f" {lr:.4g} is not above the rate {name} is usually run at ({usual:g}), so the steps are "
                               f"too large for this data's scale: check that the inputs and the regression targets "
                               f"are standardised (mean 0, std 1) as well.",
                         f"{lr:.4g} 并不高于 {name} 常用的学习率（{usual:g}），所以是这份数据的尺度让每一步都太大："
                         f"也请检查输入和回归目标是否已标准化（均值 0、标准差 1）。")
        words["story"] += scale
        if step < 20 and peak < 20 * start:  # an early verdict on a moderate rise: say how sure it is
            words["story"] += self._short_note(step)
        words["remedy"] = basis
        evidence = {"start_loss": start, "loss": value, "lr": lr, "step": step, "form": form, "suggested_lr": new,
                    "usual_lr": usual}
        if form != "blowup":
            evidence["class_mix"] = self.mix.ratio()  # distinct classes per batch over what shuffled data gives
        evidence.update({k: v for k, v in values.items() if not isinstance(v, str)})
        self.report(self.step_where or where, evidence, lr=lr, call=optimizer_call(self.opt, new, self.names), **words)

    def _short_note(self, step: int) -> str:
        """How sure a verdict reached within the first few steps is."""
        return pick(self.session.lang,
                    f" (Seen within the first {max(step, 1)} steps: a likely sign, not proof; a run this short cannot "
                    f"show whether the loss would have come back down.)",
                    f"（在最初 {max(step, 1)} 步内观察到：这是很可能的迹象，而不是证明；这么短的训练无法说明损失之后"
                    f"是否会降回来。）")

    def suggest(self, lr: float, growth: float, steps: int, form: str) -> tuple[float, str]:
        """A learning rate the run's evidence supports, and why (en or zh): the largest rate the loss was seen to
        fall at, else one as much below ``lr`` as the measured growth calls for (a step that overshoots a
        quadratic minimum multiplies the loss by (1 - lr * curvature)^2 per step: from the growth per step, the
        rate that lands at a quarter of the edge of stability, below at least 10x smaller), never above the
        optimizer's usual scale when ``lr`` is above it."""
        lang = self.session.lang
        fell = self._fell_at(lr)
        if fell is not None:
            return fell, pick(lang, f"use the rate the loss was seen to fall at earlier in this run, {fell:.2g}",
                              f"使用本次训练早些时候损失确实在下降时的学习率 {fell:.2g}")
        assert self.opt is not None
        usual = usual_lr(self.opt)
        factor = 10.0
        why_en, why_zh = "about 10x smaller", "约小 10 倍"
        if form == "blowup" and not isinstance(self.opt, _ADAPTIVE) and growth > 1:
            per_step = growth ** (1 / max(steps, 1))
            # lr * curvature was 1 + sqrt(growth per step) (above 2: diverging); a network's loss can grow faster
            # than a quadratic's once it overflows, so the growth supports at most a hundredfold cut.
            need = min(2 * (1 + math.sqrt(per_step)), self.MAX_CUT)
            if need > factor:
                factor = need
                if need < self.MAX_CUT:
                    why_en = (f"{need:.3g}x smaller: the loss grew {per_step:.3g}x per step, so each step overshot "
                              f"the minimum about {(math.sqrt(per_step) + 1) / 2:.3g}x too far")
                    why_zh = (f"小 {need:.3g} 倍：损失每步增长 {per_step:.3g} 倍，说明每一步越过最小值约 "
                              f"{(math.sqrt(per_step) + 1) / 2:.3g} 倍")
                else:
                    why_en = f"{need:.3g}x smaller: the loss grew {per_step:.3g}x per step, which calls for at least that"
                    why_zh = f"小 {need:.3g} 倍：损失每步增长 {per_step:.3g} 倍，至少需要缩小这么多"
        new = lr / factor
        if lr > usual * 1.001 and new > usual:
            new = usual
            why_en, why_zh = f"the rate {type(self.opt).__name__} is usually run at", f"{type(self.opt).__name__} 常用的学习率"
        new = _nice_below(new)
        return new, pick(lang, f"use a learning rate of {new:.2g} ({why_en}), or lower it during training "
                               f"(torch.optim.lr_scheduler.CosineAnnealingLR)" if form != "blowup" else
                         f"use a learning rate of {new:.2g} ({why_en})",
                         f"把学习率设为 {new:.2g}（{why_zh}），或在训练中逐步降低它"
                         f"（torch.optim.lr_scheduler.CosineAnnealingLR）" if form != "blowup" else
                         f"把学习率设为 {new:.2g}（{why_zh}）")

    def _fell_at(self, lr: float) -> float | None:
        """The largest learning rate below ``lr / 2`` at which the loss was seen to fall (a warm-up or a schedule
        that changed the rate), else None."""
        losses, steps = self.session.losses, self.session.loss_steps
        best: float | None = None
        for i, (begin, rate) in enumerate(self.rates):
            end = self.rates[i + 1][0] if i + 1 < len(self.rates) else math.inf
            if not 0 < rate <= lr / 2:
                continue
            at = [x for x, s in zip(losses, steps) if begin <= s < end and math.isfinite(x)]
            k = len(at) // 3
            if k >= 2 and statistics.fmean(at[-k:]) < self.FELL * statistics.fmean(at[:k]):
                best = rate if best is None else max(best, rate)
        return best


def _pvariance(xs: list[float]) -> float:
    """The population variance of ``xs`` (as ``statistics.pvariance``, in float64 arithmetic: a long run's losses
    are read once at its end, and the exact fractions ``statistics`` sums with cost more than the check)."""
    return float(torch.tensor(xs, dtype=torch.float64).var(correction=0))


def stalled_loss(losses: list[float], share: float) -> tuple[float, float] | None:
    """(start, end): the mean loss of the run's first and last quarter, when the end is still above ``share``
    of the start (training barely got anywhere), else None. Runs too short or not finite are not judged."""
    n = len(losses)
    if n < 20 or not all(map(math.isfinite, losses[n - n // 4:])) or min(losses) < 0:
        return None
    start, end = statistics.fmean(losses[:n // 4]), statistics.fmean(losses[n - n // 4:])
    return (start, end) if math.isfinite(start) and start > 0 and end >= share * start else None


def flat_loss(losses: list[float], cap: float) -> tuple[float, float] | None:
    """(start, end) when the loss has confidently not moved, else None.

    Moved: an early drop (the first 3, 10 or 30 losses above the last quarter by 2 % and by 3 standard
    errors), a decrease over the run (first quarter above the last by 2 % and by 2 standard errors), or a
    decrease still going on (third quarter significantly above the fourth: slow training). Confidently
    flat: first and last quarter within ``cap`` (relative), noise included, so noisy curves are not judged.
    """
    n = len(losses)
    if n < 20 or not all(map(math.isfinite, losses)) or min(losses) < 0:
        return None
    w = n // 4
    q1, q3, q4 = losses[:w], losses[n - 2 * w:n - w], losses[n - w:]
    start, end = statistics.fmean(q1), statistics.fmean(q4)
    if start <= 1e-8:
        return None
    noise = math.sqrt(_pvariance(losses[n // 2:]))  # batch-to-batch spread once training has settled
    for k in (3, 10, 30):  # early drops of any length, each against its own noise
        if k <= w and statistics.fmean(losses[:k]) - end > max(0.02 * end, 3 * noise / math.sqrt(k)):
            return None
    se = math.sqrt((_pvariance(q1) + _pvariance(q4)) / w)
    if start - end > max(2 * se, 0.02 * start) or abs(start - end) + 2 * se > cap * start:
        return None
    se_late = math.sqrt((_pvariance(q3) + _pvariance(q4)) / w)
    if statistics.fmean(q3) - end > 2 * se_late:
        return None
    return start, end


def _unmoved(losses: list[float]) -> tuple[float, float] | None:
    """(start, end) of a short run whose loss stayed within 0.5 % of where it started, else None."""
    if not all(map(math.isfinite, losses)) or min(losses) < 0:
        return None
    start, end = statistics.fmean(losses[:3]), statistics.fmean(losses[-3:])
    return (start, end) if start > 1e-8 and abs(end - start) <= 0.005 * start else None


@register
class LrTooLow(Check):
    id = "lr-too-low"
    severity = "warning"
    summary = ("each optimizer step changes the weights by a tiny fraction of their size, or the loss sits at its "
               "start for the first quarter of a run at a small learning rate and is still falling at the end")
    text = {
        "en": Text(
            title="The learning rate {lr} is too low: {headline}",
            general="The learning rate is too low: training crawls",
            message="{story} With learning rate {lr} the model would need many times more steps to learn what it "
                    "could.",
            fix="raise the learning rate (Adam-like: ~1e-3, SGD: ~1e-2 to 1e-1, Adadelta: 1.0): {call}"),
        "zh": Text(
            title="学习率 {lr} 太小：{headline}",
            general="学习率太小：训练进展极慢",
            message="{story}学习率为 {lr} 时，模型需要多得多的步数才能学到它本来能学到的东西。",
            fix="调大学习率（Adam 类约 1e-3，SGD 约 1e-2 到 1e-1，Adadelta 为 1.0）：{call}"),
    }

    SLOW = 2e-4  # ||Δw|| / ||w|| per step below this is too slow (Adam at lr 1e-3 moves an MLP by 1e-3 to 5e-3)...
    STALLED = 0.9  # ...when the loss of the run's last quarter is still above this fraction of its first quarter's
    MIN_GRAD = 1e-4  # ||g|| / ||w|| above this: the gradient is alive, so the step size is what is small
    WATCH = 4  # weight matrices measured per sampled step

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.pending: list[tuple[torch.Tensor, torch.Tensor, float, float]] = []
        self.samples: dict[int, list[float]] = {}  # optimizer id -> update ratio per sampled step (inf: no live grad)
        self.opts: dict[int, torch.optim.Optimizer] = {}
        self.names: dict[int, UserNames] = {}  # optimizer id -> the user's names for it and what it trains
        self.lrs: dict[int, tuple[float, float, float]] = {}  # optimizer id -> (first, largest, last) sampled lr
        self.classes = 0  # C of the cross-entropy / NLL loss seen on sampled steps (0: another loss)
        self.where: str | None = None
        self.backward_since_step = False

    @sampled_only  # the step's own backward() comes before its sampled step()
    def on_backward(self, ev: BackwardEvent) -> None:
        self.backward_since_step = True

    @sampled_only  # the number of classes does not change: sampled steps (the first is one) are enough
    def on_loss(self, ev: LossEvent) -> None:
        self.classes = loss_classes(ev) or self.classes

    @sampled_only
    def on_step_pre(self, ev: StepEvent) -> None:
        self.pending = []
        if not (self.session.sampled and self.backward_since_step):
            return
        mats = [p for g in ev.optimizer.param_groups for p in g["params"]
                if p.ndim >= 2 and p.grad is not None and not p.grad.is_sparse]
        mats = sorted(mats, key=lambda t: t.numel())[: self.WATCH]
        grads = step_grad_norms(ev)  # (shared with the gradient checks of this step)
        for p, wn in zip(mats, norms(mats)):
            if wn > 0 and math.isfinite(wn):
                self.pending.append((p, p.detach().clone(), wn, grads[id(p)]))

    @sampled_only
    def on_step(self, ev: StepEvent) -> None:
        self.backward_since_step = False
        key, lr = id(ev.optimizer), current_lr(ev.optimizer)
        first, top, _ = self.lrs.get(key, (lr, lr, lr))
        self.lrs[key] = (first, max(top, lr), lr)
        if self.opts.get(key) is not ev.optimizer:
            self.names[key] = UserNames.of(sys._getframe(), ev.optimizer)
        self.opts[key] = ev.optimizer
        if self.where is None:  # finding the line walks the stack: once
            self.where = ev.where
        if not self.pending:
            return
        live = [(p, before, wn) for p, before, wn, gn in self.pending if gn / wn >= self.MIN_GRAD]
        alive = [d / wn for d, (_, _, wn) in zip(change_norms([(p, before) for p, before, _ in live]), live)]
        self.pending = []
        # A step whose gradients are all vanishingly small says nothing about the learning rate.
        ratio = max(alive) if alive else math.inf
        self.samples.setdefault(id(ev.optimizer), []).append(ratio)

    SHORT = 10  # a run shorter than 50 steps is judged from this many, when every checked step is below SLOW

    def on_end(self) -> None:
        s = self.session
        short = s.step < 50 or len(s.losses) < 50
        if short and (s.step < self.SHORT or len(s.losses) < self.SHORT):
            return
        stalled = _unmoved(s.losses) if short else stalled_loss(s.losses, self.STALLED)
        if stalled is None:
            self._slow_start()
            return
        start, end = stalled
        for key, ratios in self.samples.items():
            tiny = [r for r in ratios if r < self.SLOW]
            if len(ratios) >= 8 and len(tiny) >= (1.0 if short else 0.9) * len(ratios) \
                    and all(r < self.SLOW for r in ratios[-3:]):
                opt = self.opts[key]
                lr = current_lr(opt)
                if short and lr <= 0:
                    continue  # no learning rate at all: params-not-updating says so
                ratio = statistics.median(ratios)
                self.report(self.where, {"median_update_ratio": ratio, "lr": lr,
                                         "samples": len(ratios), "loss_start": start, "loss_end": end},
                            lr=lr, call=optimizer_call(opt, usual_lr(opt), self.names.get(key)),
                            headline=pick(s.lang, "the weights barely move", "权重几乎不动"),
                            story=pick(
                                s.lang,
                                f"On {len(ratios)} checked steps, optimizer.step() changed the weight matrices by "
                                f"only {ratio:.3g} of their size (median; healthy training changes them by about "
                                f"1e-3 to 1e-2 per step), and over {s.step} steps the loss only went from "
                                f"{start:.4g} to {end:.4g}."
                                + (f" After only {s.step} steps, this is a likely sign, not proof." if short else ""),
                                f"在检查的 {len(ratios)} 步中，optimizer.step() 只让权重矩阵变化了其大小的 {ratio:.3g}"
                                f"（中位数；正常训练每步约变化 1e-3 到 1e-2），{s.step} 步下来损失只从 {start:.4g} "
                                f"降到 {end:.4g}。" + (f"只训练了 {s.step} 步，这是很可能的迹象，而不是证明。" if short else "")))
                return
        self._slow_start()

    SLOW_START = 0.93  # the first quarter's loss still above this share of the first losses...
    STILL_FALLING = 0.98  # ...the last quarter below this share of the third (and by 2 standard errors)...
    FAR = 0.25  # ...and still above this share of the start: the run ended midway down its curve
    LOW_LR = 1 / 3  # at a learning rate at most this share of the usual one (Adam-like 1e-3, SGD 1e-2)
    STEEP = 0.75  # the last quarter's drop against the second's (Adam at 1e-4 on digits: 1.9; a slow, healthy
    #               full-batch SGD regression that flattens out: 0.54)
    VERY_LOW_LR = 0.1  # or, at a tenth of the usual learning rate or less...
    NEAR_CHANCE = 0.7  # ...a classifier whose last quarter's loss is still above this share of ln(classes)

    def _slow_start(self) -> None:
        """A run that spent its first quarter at the starting loss and ended still sliding down, with one
        optimizer whose learning rate never rose (no warm-up) and is well below the usual: the steps were too
        small for the run's length (Adam at 1e-4 on digits: 15 points of accuracy short after 350 steps)."""
        s = self.session
        losses = s.losses
        n = len(losses)
        if n < 100 or s.step < 100 or len(self.lrs) != 1 or min(losses) < 0 or not all(map(math.isfinite, losses)):
            return
        (key, (first_lr, top_lr, lr)), = self.lrs.items()
        opt = self.opts.get(key)
        if opt is None or not 0 < lr <= first_lr or top_lr > first_lr * 1.001 or lr > self.LOW_LR * usual_lr(opt):
            return
        w = n // 4
        start = statistics.median(losses[:5])
        q1, q2, q3, q4 = losses[:w], losses[w:2 * w], losses[n - 2 * w:n - w], losses[n - w:]
        m1, m2, m3, m4 = (statistics.fmean(q) for q in (q1, q2, q3, q4))
        se_late = math.sqrt((_pvariance(q3) + _pvariance(q4)) / w)
        if not (start > 1e-8 and m1 >= self.SLOW_START * start and m4 >= self.FAR * start):
            return
        # Still on the steep part of its curve: the last quarter fell about as much as the second, or more (a
        # slow run that is merely flattening out, as any run does in the end, is left alone)...
        steep = m4 <= self.STILL_FALLING * m3 and m3 - m4 > 2 * se_late and m3 - m4 >= self.STEEP * (m1 - m2)
        # ...or, at a learning rate a tenth of the usual or less, a classifier still near what guessing scores
        # at the end, its loss falling steadily but by a few per cent over the whole run.
        se = math.sqrt((_pvariance(q1) + _pvariance(q4)) / w)
        chance = math.log(self.classes) if self.classes >= 2 else 0.0
        crawl = (lr <= self.VERY_LOW_LR * usual_lr(opt) and chance > 0 and m4 >= self.NEAR_CHANCE * chance
                 and m4 >= self.STALLED * m1 and m1 - m4 > 2 * se)
        usual = usual_lr(opt)
        evidence = {"lr": lr, "loss_start": start, "first_quarter_loss": m1, "third_quarter_loss": m3,
                    "last_quarter_loss": m4, "steps": s.step}
        if steep:
            headline = pick(s.lang, "the loss was still sliding down when the run ended", "训练结束时损失仍在缓慢下降")
            story = pick(
                s.lang,
                f"Over the first quarter of the run ({w} losses) the loss averaged {m1:.4g}, still {m1 / start:.0%} "
                f"of where it started ({start:.4g}); it then fell slowly, and was still falling at the end ({m3:.4g} "
                f"in the third quarter, {m4:.4g} in the last), after {s.step} steps. The steps are too small for a "
                f"run this long.",
                f"训练的前四分之一（{w} 个损失）里损失平均为 {m1:.4g}，仍是起点（{start:.4g}）的 {m1 / start:.0%}；"
                f"之后缓慢下降，{s.step} 步结束时仍在下降（第三个四分之一为 {m3:.4g}，最后四分之一为 {m4:.4g}）。"
                f"对这么长的训练来说，每一步都太小了。")
        elif crawl:
            evidence["chance_loss"] = chance
            headline = pick(s.lang, "the loss crawls", "损失下降得极慢")
            story = pick(
                s.lang,
                f"Over {s.step} steps the loss went only from {m1:.4g} (first quarter of the run) to {m4:.4g} (last "
                f"quarter): falling steadily, but still near ln({self.classes}) = {chance:.3g}, what a model that "
                f"guesses scores. The learning rate is {usual / lr:.0f}x below the usual {usual:g} for "
                f"{type(opt).__name__}.",
                f"{s.step} 步下来，损失只从 {m1:.4g}（前四分之一）降到 {m4:.4g}（最后四分之一）：一直在降，但仍接近 "
                f"ln({self.classes}) = {chance:.3g}，也就是随机猜测的水平。学习率比 {type(opt).__name__} 常用的 "
                f"{usual:g} 小了 {usual / lr:.0f} 倍。")
        else:
            return
        self.report(self.where, evidence, lr=lr, call=optimizer_call(opt, usual, self.names.get(key)),
                    headline=headline, story=story)


def _frozen(losses: list[float]) -> bool:
    """A short run (10+ losses) whose loss is the same number every time: nothing changes the model, e.g.
    optimizer.step() is never called on a full batch. No noise to wait out, so no 100 steps needed."""
    if len(losses) < 10 or not all(map(math.isfinite, losses)):
        return False
    return max(losses) - min(losses) <= 1e-6 * max(abs(statistics.fmean(losses)), 1e-12)


@register
class LossNotDecreasing(Check):
    id = "loss-not-decreasing"
    severity = "warning"
    summary = ("after 100+ backward calls the loss is where it started (after 10, when it has not moved at all), or "
               "a classifier's loss is still at the level of guessing after 300")
    text = {
        "en": Text(
            title="The loss is not going down",
            message="After {count} backward() calls the loss averages {end} over the last quarter of the run, "
                    "{change} away from the first quarter ({start}): the model is not learning.{uniform_en} "
                    "Common causes: optimizer.step() never "
                    "changes the model (missing, or the optimizer holds another model's parameters), inputs and "
                    "labels shuffled separately, a learning rate far off, or a frozen model.",
            fix="check that the optimizer gets this model's parameters and that x and y stay paired: "
                "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3); overfit one batch first to test"),
        "zh": Text(
            title="损失没有下降",
            message="调用 {count} 次 backward() 之后，最后四分之一训练过程的平均损失为 {end}，与最初四分之一（{start}）"
                    "只差 {change}：模型没有在学习。{uniform_zh}常见原因：optimizer.step() 没有改变这个模型（漏写了，"
                    "或者优化器拿的是另一个模型的参数）、输入和标签被分别打乱、学习率严重不合适，或者模型被冻结。",
            fix="确认优化器拿到的是这个模型的参数、x 和 y 保持一一对应：optimizer = torch.optim.Adam(model.parameters(), "
                "lr=1e-3)；可以先试着过拟合一个批次"),
    }

    MIN_BACKWARDS = 100
    CAP = 0.05  # first and last quarter of the run within 5 % of each other, noise included
    # Or a classifier still guessing: after this many backward calls, its last quarter's cross-entropy is still
    # this share of ln(classes) or more (a model that learns nothing from its input but memorizes a little
    # drifts a few percent down, so it is not flat; a weak but real signal on two classes ends below 98 %).
    CHANCE_BACKWARDS = 300
    CHANCE_SHARE = 0.95
    CHANCE_SHARE_BINARY = 0.98

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.classes = 0  # C of the last cross-entropy / NLL input, 0 when the loss is something else
        self.where: str | None = None
        self.seen: set[int] = set()  # optimizers that have stepped
        self.last = 0
        self.returns = 0  # steps that went back to an optimizer used before another one: GAN-style training
        self.training_losses = 0  # loss calls with gradients since the last backward (sampled steps)
        self.only_ce = True  # every sampled backward ran on exactly one cross-entropy / NLL loss
        self.lr_share = 0.0  # the largest learning rate over the usual one (Adam 1e-3, SGD 1e-2); 0: not seen

    @sampled_only  # the loss a run trains with does not change: sampled steps (the first is one) show it
    def on_loss(self, ev: LossEvent) -> None:
        self.classes = loss_classes(ev)
        if isinstance(ev.input, torch.Tensor) and ev.input.requires_grad:
            self.training_losses += 1
            self.only_ce &= self.classes >= 2

    @sampled_only  # finding the line walks the stack: not every step (the first step is sampled)
    def on_backward(self, ev: BackwardEvent) -> None:
        self.where = ev.where
        self.only_ce &= self.training_losses == 1
        self.training_losses = 0

    RELAX = 200  # steps with one optimizer, after which only sampled steps are watched for a second one

    def on_step(self, ev: StepEvent) -> None:
        key = id(ev.optimizer)
        if self.session.sampled:
            lrs = [g["lr"] for g in ev.optimizer.param_groups if isinstance(g.get("lr"), (int, float))]
            if lrs:  # (a tensor learning rate, maybe on the device, is not read here)
                self.lr_share = max(self.lr_share, max(lrs) / usual_lr(ev.optimizer))
        if key != self.last and key in self.seen:
            self.returns += 1
        self.seen.add(key)
        self.last = key
        if self.session.step >= self.RELAX and len(self.seen) == 1:
            self.session.relax(self, "on_step")  # not a GAN: optimizers taking turns show from the start

    def on_end(self) -> None:
        s = self.session
        if (s.backward_count < self.MIN_BACKWARDS or len(s.losses) < self.MIN_BACKWARDS) and not _frozen(s.losses):
            return  # too short to judge, unless the loss did not move at all
        if self.returns >= 3 and self.returns >= 0.25 * s.step:
            return  # optimizers taking turns (a GAN): those losses are not meant to fall
        frozen = _frozen(s.losses)
        flat = (s.losses[0], s.losses[-1]) if frozen else flat_loss(s.losses, self.CAP)
        rule = "frozen" if frozen else "flat"
        if flat is None:
            flat, rule = self._guessing(s.losses), "guessing"
        if flat is None:
            return
        start, end = flat
        en = zh = ""
        if self.classes >= 2 and abs(end - math.log(self.classes)) <= 0.05 * math.log(self.classes):
            en = (f" The loss sits at ln({self.classes}) = {math.log(self.classes):.3f}, the value of a model that "
                  f"gives all {self.classes} classes the same probability: it predicts uniform probabilities and "
                  f"ignores its input.")
            zh = (f"损失停在 ln({self.classes}) = {math.log(self.classes):.3f}，这正是对全部 {self.classes} 个类别给出相同"
                  f"概率的模型的损失：模型输出的是均匀概率，完全没有利用输入。")
        rel = abs(end - start) / start
        change = f"{rel:.1%}" if rel >= 0.001 else "<0.1%"
        self.report(self.where, {"loss_start": start, "loss_end": end, "backward_calls": s.backward_count,
                                 "classes": self.classes or None, "rule": rule},
                    count=s.backward_count, start=start, end=end, change=change, uniform_en=en, uniform_zh=zh)

    def _guessing(self, losses: list[float]) -> tuple[float, float] | None:
        """(start, end) of a classifier whose last quarter is still at the level of guessing, else None. A
        learning rate a tenth of the usual or less is lr-too-low's story (its crawl), not this one's."""
        n, c = len(losses), self.classes
        if (n < self.CHANCE_BACKWARDS or not self.only_ce or c < 2 or 0 < self.lr_share <= LrTooLow.VERY_LOW_LR
                or not all(map(math.isfinite, losses))):
            return None
        chance = math.log(c)
        start, end = statistics.fmean(losses[:n // 4]), statistics.fmean(losses[n - n // 4:])
        share = self.CHANCE_SHARE_BINARY if c == 2 else self.CHANCE_SHARE
        return (start, end) if share * chance <= end <= 1.5 * chance else None
