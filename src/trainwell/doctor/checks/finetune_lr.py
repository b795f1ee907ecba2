"""lr-too-high-for-finetuning: a rate that wrecks the pretrained weights in the first steps of fine-tuning.

A model that starts from loaded weights (``doctor/loaded.py``) begins near a good solution; its first losses are
its best guide. When, within the first steps an optimizer trains most of such a model, the loss climbs and stays
well above where it started (the median of 5 losses in a row above 3x the median of the first 3), the updates
are too large for the pretrained weights: the features they learned are being overwritten. ``lr-too-high`` judges
any run against the optimizer's usual rate and needs a larger rise (5x); when both are found it is folded into this
finding (``folding.py``), whose fix is the fine-tuning one: a rate about 10x smaller, or a smaller one for the
pretrained part than for the new head. An optimizer that trains only a new head over a frozen backbone cannot
wreck the backbone and is not judged.
"""

from __future__ import annotations

import bisect
import math
import statistics
import weakref

import torch

from trainwell.doctor.check import Check, Text, register, sampled_and_first_step
from trainwell.doctor.events import StepEvent

Optimizer = torch.optim.Optimizer


@register
class LrTooHighForFinetuning(Check):
    id = "lr-too-high-for-finetuning"
    severity = "error"
    summary = "fine-tuning a pretrained model at a rate so high that the loss climbs above its start: features wiped"
    text = {
        "en": Text(
            title="The learning rate is too high for fine-tuning: the pretrained features are being destroyed",
            message="{model} starts from loaded weights, yet within its first {steps} fine-tuning steps the loss "
                    "climbed to {rise}x where it started ({start} -> {peak}) and stayed there. A pretrained model "
                    "starts near a good solution; at {optimizer} lr={lr} each update is so large that it overwrites "
                    "what the weights learned instead of adjusting it, and training starts over from damaged "
                    "features.",
            fix="fine-tune at a rate about 10x smaller (lr={smaller}), or give the pretrained part a smaller rate than "
                "the new head: torch.optim.AdamW([{{'params': backbone.parameters(), 'lr': {smaller}}}, "
                "{{'params': head.parameters(), 'lr': {lr}}}])"),
        "zh": Text(
            title="学习率对微调来说太高：预训练特征正在被破坏",
            message="{model} 从加载的权重开始训练，但在最初 {steps} 步微调中损失升到了起点的 {rise} 倍（{start} -> {peak}），"
                    "并且一直停留在那里。预训练模型的起点已经接近好的解；{optimizer} lr={lr} 时每一步更新都太大，"
                    "把权重学到的东西覆盖掉了，而不是在其基础上调整，训练只能从被破坏的特征重新开始。",
            fix="把微调的学习率降低约 10 倍（lr={smaller}），或者给预训练部分比新分类头更小的学习率："
                "torch.optim.AdamW([{{'params': backbone.parameters(), 'lr': {smaller}}}, "
                "{{'params': head.parameters(), 'lr': {lr}}}])"),
    }
    RISE = 3.0  # the median of RUN losses in a row above this many times the start ...
    RUN = 5
    FIRST = 3  # losses whose median is the start (the updates can wreck the weights from the third step on)
    WITHIN = 100  # ... within this many losses of the first fine-tuning step

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.seen: weakref.WeakSet[Optimizer] = weakref.WeakSet()
        self.tuning: weakref.ref[Optimizer] | None = None
        self.model_name = "The model"
        self.start_step = -1
        self.off = False
        self.where: str | None = None

    @sampled_and_first_step  # each optimizer's first step: where fine-tuning begins
    def on_step(self, ev: StepEvent) -> None:
        if self.reported or self.off:
            return
        if self.tuning is not None:
            if self.tuning() is not ev.optimizer and self.session.step - self.start_step < self.WITHIN:
                self.off = True  # another optimizer steps in the same stretch (a GAN, two models): not judged
            elif self.session.sampled:
                self._judge()
        elif ev.optimizer not in self.seen:
            self._first_seen(ev)

    def _first_seen(self, ev: StepEvent) -> None:
        opt = ev.optimizer
        self.seen.add(opt)
        if not self.session.loaded:
            return
        module = self.session.loaded.trained_by(opt)
        if module is not None:
            self.tuning = weakref.ref(opt)
            self.start_step = self.session.step
            self.model_name = type(module).__name__
            self.where = ev.where

    def on_end(self) -> None:
        if self.tuning is not None and not (self.reported or self.off):
            self._judge()

    def _judge(self) -> None:
        s = self.session
        losses = s.losses
        begin = bisect.bisect_left(s.loss_steps, self.start_step)  # (steps only grow: no pass over the whole run)
        tuned = losses[begin:begin + self.WITHIN]
        if len(tuned) >= self.WITHIN:
            self.off = True  # judged below for the last time: the first steps of fine-tuning are over
        if len(tuned) < self.FIRST + self.RUN:
            return
        first = tuned[:self.FIRST]
        if not all(math.isfinite(v) for v in first):
            return
        start = statistics.median(first)
        if start <= 0:
            return  # (a loss that can go negative has no "times its start")
        for i in range(self.FIRST, len(tuned) - self.RUN + 1):
            window = [v if math.isfinite(v) else math.inf for v in tuned[i:i + self.RUN]]
            peak = statistics.median(window)
            if peak > self.RISE * start:
                self._report(start, peak, i + self.RUN)
                return

    def _report(self, start: float, peak: float, steps: int) -> None:
        opt = self.tuning() if self.tuning is not None else None
        lrs = sorted({float(g["lr"]) for g in opt.param_groups if "lr" in g}) if opt is not None else []
        lr = lrs[-1] if lrs else float("nan")
        rise = peak / start
        evidence = {"model": self.model_name, "start_loss": start, "loss_after": peak, "rise": rise,
                    "losses_seen": steps, "optimizer": type(opt).__name__ if opt is not None else "?", "lr": lr,
                    "suggested_lr": lr / 10}
        self.report(self.where, evidence, model=self.model_name, steps=steps,
                    rise=f"{rise:.3g}" if math.isfinite(rise) else "inf", start=f"{start:.4g}",
                    peak=f"{peak:.4g}", optimizer=evidence["optimizer"], lr=f"{lr:.3g}", smaller=f"{lr / 10:.3g}")
