"""frozen-params-changing: parameters frozen with ``requires_grad=False`` that ``optimizer.step()`` still moves.

``requires_grad=False`` stops new gradients, not the optimizer. PyTorch's optimizers skip a parameter whose
``.grad`` is None, so a parameter frozen before it ever had a gradient (or cleared with
``zero_grad(set_to_none=True)``, the default) stays put even inside the optimizer: harmless, and not reported. One
that still holds a gradient tensor (``zero_grad(set_to_none=False)`` keeps zeros; a gradient left from before
it was frozen) is stepped: momentum and Adam's running averages from earlier steps, and weight decay, keep moving
it. Judged from the values themselves: a few frozen parameters of each optimizer are copied before a sampled
step and compared after it, so a change made by the user's own code (an EMA teacher) never counts.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks._grads import optimizer_params, read_back
from trainwell.doctor.checks.params import _param_names
from trainwell.doctor.events import StepEvent
from trainwell.doctor.lang import pick

Optimizer = torch.optim.Optimizer


@register
class FrozenParamsChanging(Check):
    id = "frozen-params-changing"
    severity = "error"
    summary = "parameters with requires_grad=False still change when the optimizer steps (a frozen part that moves)"
    text = {
        "en": Text(
            title="Frozen parameters still change when the optimizer steps",
            message="{count} parameter tensors with requires_grad=False ({names}) changed when the optimizer "
                    "({optimizer}) stepped, on {hits} of the {checked} steps checked. requires_grad=False only stops new gradients: "
                    "these parameters are still in the optimizer and still hold a .grad tensor ({why}), and "
                    "PyTorch's optimizers step every parameter whose .grad is not None. {how} The part meant to "
                    "stay frozen drifts away from its pretrained values.",
            fix="give the optimizer only what trains, after freezing, and clear gradients to None: "
                "optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)  "
                "# and optimizer.zero_grad(set_to_none=True)"),
        "zh": Text(
            title="冻结的参数在优化器更新时仍在变化",
            message="{count} 个 requires_grad=False 的参数张量（{names}）在优化器（{optimizer}）更新时发生了变化，"
                    "检查的 {checked} 步中有 {hits} 步如此。requires_grad=False 只是不再产生新的梯度：这些参数仍在优化器里，"
                    "而且仍带着 .grad 张量（{why}），而 PyTorch 的优化器会更新每一个 .grad 不为 None 的参数。{how}"
                    "本应冻结的部分正在偏离它的预训练值。",
            fix="冻结之后只把要训练的参数交给优化器，并把梯度清成 None："
                "optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)  "
                "# 并使用 optimizer.zero_grad(set_to_none=True)"),
    }
    WATCH = 4  # frozen parameters copied per optimizer and sampled step
    MAX_NUMEL = 1 << 16  # larger ones are compared on their first elements
    HITS = 2  # sampled steps on which a frozen parameter changed

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.copies: weakref.WeakKeyDictionary[Optimizer, list[tuple[torch.Tensor, torch.Tensor]]] = \
            weakref.WeakKeyDictionary()
        self.checked = 0
        self.hits = 0
        self.moved: dict[int, str] = {}  # id -> name of the frozen parameters seen changing

    @sampled_only
    def on_step_pre(self, ev: StepEvent) -> None:
        if self.reported or not self.session.sampled:
            return
        # Only a parameter with a .grad can be stepped (PyTorch skips the others): those are watched first.
        frozen = [p for p in optimizer_params(ev.optimizer) if not p.requires_grad and p.layout == torch.strided
                  and p.is_floating_point()]
        if not frozen:
            return
        frozen.sort(key=lambda p: (p.grad is None, p.numel()))
        self.copies[ev.optimizer] = [(p, p.detach().reshape(-1)[:self.MAX_NUMEL].clone())
                                     for p in frozen[:self.WATCH]]

    @sampled_only
    def on_step(self, ev: StepEvent) -> None:
        copies = self.copies.pop(ev.optimizer, None)
        if not copies or self.reported:
            return
        with self.session.quiet():
            changed = read_back([(p.detach().reshape(-1)[:self.MAX_NUMEL] != old).any() for p, old in copies])
        self.checked += 1
        moved = [p for (p, _), c in zip(copies, changed) if c]
        if not moved:
            return
        self.hits += 1
        names = _param_names(list(self.session.models), {id(p) for p in moved})
        self.moved.update({id(p): n for p, n in zip(moved, names)})
        if self.hits >= self.HITS:
            self._report(ev, moved)

    def _report(self, ev: StepEvent, moved: list[torch.Tensor]) -> None:
        opt = ev.optimizer
        lang = self.session.lang
        zeros = any(p.grad is not None and not bool(p.grad.any()) for p in moved)
        why = pick(lang, "all zeros, kept by zero_grad(set_to_none=False)" if zeros else "a gradient from before "
                   "they were frozen, never cleared to None",
                   "全是零，由 zero_grad(set_to_none=False) 保留" if zeros else "冻结之前留下的梯度，从未清成 None")
        decay = sorted({float(g.get("weight_decay", 0.0)) for g in opt.param_groups if g.get("weight_decay")})
        state = any(opt.state.get(p) for p in moved)
        how = []
        if state:
            how.append(pick(lang, "The optimizer's momentum / running averages from earlier steps keep pushing them.",
                            "优化器在之前各步积累的动量 / 滑动平均仍在推动它们。"))
        if decay:
            how.append(pick(lang, f"Weight decay ({decay[-1]:g}) shrinks them every step.",
                            f"权重衰减（{decay[-1]:g}）每一步都在缩小它们。"))
        names = list(self.moved.values())
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "") or "?"
        evidence: dict[str, Any] = {"parameters": names[:20], "optimizer": type(opt).__name__,
                                    "steps_changed": self.hits, "steps_checked": self.checked,
                                    "grad_kept_as_zeros": zeros, "weight_decay": decay[-1] if decay else 0.0,
                                    "optimizer_state": state}
        self.report(ev.where, evidence, count=len(names), names=shown, optimizer=type(opt).__name__,
                    hits=self.hits, checked=self.checked, why=why, how=pick(lang, " ", "").join(how))
