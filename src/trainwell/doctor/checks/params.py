"""params-not-updating / params-not-in-optimizer / grad-none: the link between the model's
parameters, their gradients and the optimizer is broken.

All three are judged from what happens to the parameter objects themselves (values before
and after steps, which gradients a backward() call wrote), on sampled steps only.
"""

from __future__ import annotations

import math
import statistics
import weakref
from typing import Any

import torch
from torch import nn

from trainwell.doctor.check import Check, Text, register, sampled_and_next, sampled_only
from trainwell.doctor.checks._grads import optimizer_params, read_back
from trainwell.doctor.events import BackwardEvent, ForwardEvent, StepEvent

Optimizer = torch.optim.Optimizer


def _param_names(models: list[nn.Module], ids: set[int]) -> list[str]:
    """Names of the parameters in ``ids``, taken from the biggest model that holds each."""
    names: dict[int, str] = {}
    for model in sorted(models, key=lambda m: -sum(1 for _ in m.parameters())):
        for name, p in model.named_parameters():
            if id(p) in ids and id(p) not in names:
                names[id(p)] = name
    return list(names.values())


def _lrs(optimizer: Optimizer) -> str:
    lrs = sorted({float(g["lr"]) for g in optimizer.param_groups if "lr" in g})
    return ", ".join(f"{lr:.4g}" for lr in lrs) or "?"


def _loss_fell(losses: list[float]) -> bool:
    """The loss has at least halved since the start (medians of 5): the weights did move at some point,
    even if no sampled step saw it (LBFGS's first step, which runs before any gradient exists)."""
    if len(losses) < 10:
        return False
    start, now = statistics.median(losses[:5]), statistics.median(losses[-5:])
    return math.isfinite(start) and math.isfinite(now) and start > 0 and now < 0.5 * start


def _moves(p: torch.Tensor) -> bool:
    """Whether this gradient is big enough that a step must visibly change the weights. A converged
    model's gradients (or a line-search optimizer such as LBFGS that stops early) can be so small
    next to the weights that a correct update rounds away in float32."""
    g = float(p.grad.detach().abs().max())  # type: ignore[union-attr]
    w = float(p.detach().abs().max())
    return g > 1e-8 and g > 1e-5 * w


# ---------------------------------------------------------------------------------------


@register
class ParamsNotUpdating(Check):
    id = "params-not-updating"
    severity = "error"
    summary = "optimizer.step() runs with non-zero gradients, but the weights never change"
    text = {
        "en": Text(
            title="The weights do not change when the optimizer steps",
            message="On {count} optimizer steps in a row, parameters that had non-zero gradients were exactly the "
                    "same at the next step as before this one, so nothing is learned. Learning rate of this "
                    "optimizer: {lr}. Usual causes: the learning rate is 0 (or a scheduler drove it to 0), the "
                    "weights are reloaded or overwritten every iteration (load_state_dict, p.data.copy_(...) from a "
                    "saved copy), or the weights are stored in float16/bfloat16, where small updates round away "
                    "to nothing.",
            fix="use a learning rate above 0, load saved weights once before the loop (not inside it), and keep the "
                "weights in float32 (use torch.autocast for speed): optimizer = torch.optim.Adam(model.parameters(), "
                "lr=1e-3)"),
        "zh": Text(
            title="优化器更新时权重没有变化",
            message="连续 {count} 次 optimizer.step()，梯度不为零的参数在下一步时与这一步之前完全相同，模型什么也没学到。"
                    "该优化器的学习率：{lr}。常见原因：学习率为 0（或调度器把它降到了 0）；每次迭代都重新加载了权重"
                    "或覆盖了权重（load_state_dict、从保存的副本 p.data.copy_(...)）；或者权重以 float16/bfloat16 存储，"
                    "很小的更新被舍入成了零。",
            fix="学习率要大于 0，保存的权重只在循环之前加载一次（不要放在循环里），权重保持 float32（需要提速时用 torch.autocast）："
                "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)"),
    }
    PER_GROUP = 2  # smallest params, plus the same number taken from the end of each group
    MAX_NUMEL = 1 << 16  # never copy big tensors
    STREAK = 3

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.snaps: weakref.WeakKeyDictionary[Optimizer, list[tuple[torch.Tensor, torch.Tensor]]] = \
            weakref.WeakKeyDictionary()
        self.snapped = 0  # optimizers with a snapshot in snaps (an optimizer freed with one is still counted)
        self.streaks: weakref.WeakKeyDictionary[Optimizer, int] = weakref.WeakKeyDictionary()
        self.moved: weakref.WeakSet[Optimizer] = weakref.WeakSet()  # optimizers whose weights changed at least once
        # Comparisons made on the device and not read yet (read on sampled steps: other steps never wait).
        self.unread: weakref.WeakKeyDictionary[Optimizer, tuple[list[torch.Tensor], list[str]]] = \
            weakref.WeakKeyDictionary()
        self.where: str | None = None

    def _snapshot(self, optimizer: Optimizer) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Copies of a few params with non-zero gradients from every group: the smallest ones and the last
        ones (usually the output layer, whose gradients do not vanish)."""
        chosen: dict[int, torch.Tensor] = {}
        for group in optimizer.param_groups:
            live = [p for p in group["params"] if p.requires_grad and p.grad is not None
                    and p.numel() <= self.MAX_NUMEL and p.layout == p.grad.layout == torch.strided]
            for order in (sorted(live, key=lambda p: p.numel()), live[::-1]):
                taken = 0
                for p in order:
                    if taken >= self.PER_GROUP:
                        break
                    if id(p) not in chosen and _moves(p):
                        chosen[id(p)] = p
                        taken += 1
        return [(p, p.detach().clone()) for p in chosen.values()]

    @sampled_and_next  # a sampled step's snapshot is compared at the next step
    def on_step_pre(self, ev: StepEvent) -> None:
        opt = ev.optimizer
        if self.reported or opt in self.moved:
            # Weights that changed once and stop later are a model that converged, never this bug: an optimizer
            # seen updating is not watched again (the usual run, from its second sampled step on).
            return
        snap = self.snaps.pop(opt, None) if self.snapped else None  # (no weak-reference lookup on most steps)
        self.snapped -= snap is not None
        if snap:
            # Compared at this optimizer's next step (the step after a sampled one; with several optimizers
            # taking turns, its next step on a sampled step or after one), so weights reloaded after step() count too.
            self.unread[opt] = ([(p.detach() == old).all() for p, old in snap], sorted({str(p.dtype) for p, _ in snap}))
        if self.session.sampled:
            self.where = ev.where
            self._read(opt)
            if self.reported or opt in self.moved:
                return
            self.snapped += opt not in self.snaps
            self.snaps[opt] = self._snapshot(opt)

    def on_end(self) -> None:
        for opt in list(self.unread.keys()):
            if not self.reported:
                self._read(opt)

    def _read(self, opt: Optimizer) -> None:
        """Judge this optimizer's last comparison, if there is one not read yet."""
        unread, dtypes = self.unread.pop(opt, (None, []))
        if unread is None:
            return
        same = all(read_back(unread))  # one wait
        if not same or _loss_fell(self.session.losses):
            self.moved.add(opt)
        # Weights that did move once and then stop are a model that converged (or a line search
        # that found nothing better), not this bug: it shows from the first steps.
        streak = self.streaks.get(opt, 0) + 1 if same and opt not in self.moved else 0
        self.streaks[opt] = streak
        if streak >= self.STREAK:
            evidence = {"steps_unchanged": streak, "lr": _lrs(opt), "params_compared": len(unread),
                        "dtypes": dtypes}
            self.report(self.where, evidence, count=streak, lr=_lrs(opt))


# ---------------------------------------------------------------------------------------


@register
class ParamsNotInOptimizer(Check):
    id = "params-not-in-optimizer"
    severity = "error"
    summary = "parameters receive gradients but no optimizer owns them, so they are never trained"
    text = {
        "en": Text(
            title="{count} parameter tensors get gradients but are in no optimizer",
            general="Parameters get gradients but are in no optimizer",
            message="backward() writes gradients into {count} parameter tensors ({names}), but no optimizer owns "
                    "them, so optimizer.step() never changes them and they keep their initial values. {why}",
            fix="{fix}"),
        "zh": Text(
            title="有 {count} 个参数张量得到了梯度，却不属于任何优化器",
            general="有参数得到了梯度，却不属于任何优化器",
            message="backward() 把梯度写进了 {count} 个参数张量（{names}），但没有任何优化器拥有它们，"
                    "所以 optimizer.step() 从不更新它们，它们一直保持初始值。{why}",
            fix="{fix}"),
    }
    WHY = ("This happens when the model or a layer is created or replaced after the optimizer (the optimizer keeps "
           "the old parameters), or when only part of the model is passed to the optimizer.",
           "常见原因：在创建优化器之后才创建或替换了模型或某一层（优化器里还是旧参数），或者只把模型的一部分交给了优化器。")
    FIX = ("create the optimizer after the model is complete and give it every parameter you want trained: "
           "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)  # freeze the rest with p.requires_grad_(False)",
           "在模型搭好之后再创建优化器，并把所有要训练的参数都交给它："
           "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)  # 其余不训练的参数用 p.requires_grad_(False) 冻结")
    STREAK = 3  # watched backward() calls in a row showing it...
    MIN_SPAN = 10  # ...over at least this many optimizer steps (or until the end of a shorter run)
    STRANDED_AFTER = 3  # watched backward() calls after which an optimizer none of whose params got a gradient
    #                     is "stranded": it holds stale parameters (the model was rebuilt, or a copy is trained)

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.before: dict[int, tuple[torch.Tensor, torch.Tensor | None, int]] | None = None
        self.ever_received: set[int] = set()  # optimizer params seen getting a gradient
        self.watched: weakref.WeakKeyDictionary[Optimizer, int] = weakref.WeakKeyDictionary()
        self.streak = 0
        self.first_step = 0
        self.pending: dict[str, Any] | None = None  # the finding as text (objects may be gone at the end)
        self.step_where: str | None = None

    @sampled_only
    def on_step(self, ev: StepEvent) -> None:
        self.step_where = ev.where

    def _params(self) -> list[torch.Tensor]:
        seen: set[int] = set()
        out: list[torch.Tensor] = []
        sources: list[Any] = [m.parameters() for m in list(self.session.models)]
        sources += [optimizer_params(o) for o in list(self.session.optimizers)]
        for params in sources:
            for p in params:
                if p.requires_grad and id(p) not in seen:
                    seen.add(id(p))
                    out.append(p)
        return out

    @sampled_only
    def on_backward_pre(self, ev: BackwardEvent) -> None:
        self.before = None
        if self.reported or self.session.step < 1 or not self.session.sampled:
            return  # judged only once some optimizer has stepped, on sampled steps
        # The gradient object and its version tell whether this backward() wrote into it (stale gradients
        # of parameters no optimizer clears stay around, so "not None" alone is not enough).
        self.before = {id(p): (p, p.grad, p.grad._version if p.grad is not None else -1) for p in self._params()}

    @sampled_only
    def on_backward(self, ev: BackwardEvent) -> None:
        before, self.before = self.before, None
        if before is None:
            return
        received = {i for i, (p, g, v) in before.items()
                    if p.grad is not None and (p.grad is not g or p.grad._version != v)}
        trained = self.session.trained_params()
        self.ever_received |= received & trained
        stranded = False  # an optimizer none of whose params ever gets a gradient: it holds stale params
        for opt in list(self.session.optimizers):
            n = self.watched.get(opt, 0) + 1
            self.watched[opt] = n
            ids = [id(p) for p in optimizer_params(opt) if p.requires_grad]
            if ids and n >= self.STRANDED_AFTER and not any(i in self.ever_received for i in ids):
                stranded = True
        outside = received - trained
        hits: set[int] = set()
        if outside:
            for model in list(self.session.models):
                ids = {id(p) for p in model.parameters()}
                # Part of a trained model left out, or a whole model trained in place of the optimizer's.
                # A separate model that is merely not trained (a teacher) is not reported.
                if ids & outside and (stranded or ids & trained):
                    hits |= ids & outside
        if not hits:
            self.streak, self.pending = 0, None
            return
        self.streak += 1
        if self.streak == 1:
            self.first_step = self.session.step
        names = _param_names(list(self.session.models), hits)
        self.pending = {"where": self.step_where or ev.where, "names": names, "stranded": stranded}
        # Mid-run only once it has lasted a while: an optimizer that steps rarely registers late.
        if self.streak >= self.STREAK and self.session.step - self.first_step >= self.MIN_SPAN:
            self._report()

    def on_end(self) -> None:
        if self.pending is not None and self.streak >= self.STREAK:
            self._report()

    def _report(self) -> None:
        assert self.pending is not None
        names: list[str] = self.pending["names"]
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        lang = 1 if self.session.lang == "zh" else 0
        self.report(self.pending["where"], {"parameters": names[:20], "count": len(names),
                                            "optimizer_with_stale_params": self.pending["stranded"]},
                    names=shown, count=len(names), why=self.WHY[lang], fix=self.FIX[lang])


# ---------------------------------------------------------------------------------------


@register
class GradNone(Check):
    id = "grad-none"
    severity = "warning"
    summary = "some trainable parameters never get a gradient (cut from the graph, or a layer never used)"
    text = {
        "en": Text(
            title="{count} trainable parameter tensors never get a gradient",
            general="Trainable parameters never get a gradient",
            message="{names} require gradients and are in the optimizer, yet their .grad stayed None on all {checks} "
                    "steps checked while the rest of the model got gradients, so they never learn. The loss does "
                    "not depend on them: the computation was cut from the graph (.detach(), .data, .item(), a "
                    "NumPy round trip, torch.no_grad()) or the layer is defined but never used in forward().",
            fix="keep the forward pass in torch tensors without detaching, e.g. x = self.fc2(torch.relu(self.fc1(x))) "
                "instead of x = self.fc2(torch.tensor(self.fc1(x).detach().numpy())); freeze on purpose with "
                "p.requires_grad_(False)"),
        "zh": Text(
            title="有 {count} 个可训练参数张量从来没有得到梯度",
            general="有可训练参数从来没有得到梯度",
            message="{names} 需要梯度并且在优化器里，但在检查的全部 {checks} 步中它们的 .grad 一直是 None，"
                    "而模型的其他参数都有梯度，所以它们永远学不到东西。损失并不依赖它们：计算图在某处被切断了"
                    "（.detach()、.data、.item()、转成 NumPy 再转回来、torch.no_grad()），或者这一层定义了却没在 forward() 里用到。",
            fix="前向计算保持为 torch 张量、不要 detach，例如 x = self.fc2(torch.relu(self.fc1(x)))，"
                "而不是 x = self.fc2(torch.tensor(self.fc1(x).detach().numpy()))；有意冻结请用 p.requires_grad_(False)"),
    }
    MIN_CHECKS = 5  # sampled steps with .grad None (and never anything else) before a parameter counts

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.none: dict[int, tuple[weakref.ref[torch.Tensor] | None, int]] = {}  # id -> (param, steps seen with None)
        self.had: set[int] = set()  # optimizer params seen with a gradient at some step
        self.last_backward: weakref.WeakKeyDictionary[Optimizer, int] = weakref.WeakKeyDictionary()
        self.model_where: weakref.WeakKeyDictionary[nn.Module, str | None] = weakref.WeakKeyDictionary()
        self.pending: dict[str, Any] | None = None  # judged at the end: names are kept as text

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if ev.grad_enabled and ev.module not in self.model_where:
            self.model_where[ev.module] = ev.where

    @sampled_only
    def on_backward(self, ev: BackwardEvent) -> None:
        # A gradient that backward() wrote and something cleared before step() was still a gradient: that
        # parameter is connected (zero-grad-misplaced tells of the clearing).
        for opt in self.session.optimizers:
            self.had.update(id(p) for p in optimizer_params(opt) if p.grad is not None)

    @sampled_only
    def on_step_pre(self, ev: StepEvent) -> None:
        opt, count = ev.optimizer, self.session.backward_count
        if self.last_backward.get(opt) == count or not self.session.sampled:
            return  # no backward() since this optimizer's last step, or not a sampled step
        self.last_backward[opt] = count
        params = [p for p in optimizer_params(opt) if p.requires_grad]
        has = [p.grad is not None for p in params]
        if not any(has):
            return  # all cleared before step(): zero-grad-misplaced's business
        fresh = False
        for p, h in zip(params, has):
            if h:
                self.had.add(id(p))
            elif id(p) not in self.had:
                ref, n = self.none.get(id(p), (None, 0))
                if ref is None or ref() is not p:  # new, or an id reused by another tensor
                    ref, n = weakref.ref(p), 0
                self.none[id(p)] = (ref, n + 1)
                fresh |= n + 1 == self.MIN_CHECKS
        if fresh or self.pending:
            self._judge()

    def _judge(self) -> None:
        """Name the parameters that qualify now (models may be gone by the end of the script)."""
        cands = {i for i, (ref, n) in self.none.items() if n >= self.MIN_CHECKS and i not in self.had
                 and ref is not None and ref() is not None}
        self.pending = None
        if not cands:
            return
        for model in sorted(self.session.models, key=lambda m: -sum(1 for _ in m.parameters())):
            named = [(name, id(p)) for name, p in model.named_parameters()]
            if any(i in self.had for _, i in named) and any(i in cands for _, i in named):
                # A trained model: some of its params do get gradients, these never do.
                self.pending = {"where": self.model_where.get(model), "checks": min(self.none[i][1] for i in cands),
                                "names": {i: name for name, i in named if i in cands}}
                return

    def on_end(self) -> None:
        if self.pending is None:
            return
        # A parameter that got a gradient after it was named was only used sometimes: drop it.
        names = [name for i, name in self.pending["names"].items() if i not in self.had]
        if not names:
            return
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        self.report(self.pending["where"], {"parameters": names[:20], "steps_checked": self.pending["checks"]},
                    names=shown, count=len(names), checks=self.pending["checks"])
