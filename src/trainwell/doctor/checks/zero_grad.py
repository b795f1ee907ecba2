"""zero-grad-missing / zero-grad-misplaced: gradients never cleared, or cleared before the step.

zero-grad-misplaced has two forms: everything cleared between the last backward() and step() (the step
uses zeros), or gradients cleared between two backward() calls of one step (one zero_grad() per loss of a
multi-task model: the parameters only the earlier losses reach are None again when step() runs).

Both are judged from the gradients themselves, so every way of clearing counts
(``optimizer.zero_grad()``, ``model.zero_grad()``, ``p.grad = None``, ``p.grad.zero_()``),
and intended accumulation (clear every k steps, step every k backwards) stays quiet.
Hand-written gradient descent (no optimizer: ``w -= lr * w.grad`` under ``no_grad``) counts too:
the weights of the loss's graph changed since the last backward() and still carried its gradient.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable

import torch

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks._grads import grad_is_clear, optimizer_params, watched_optimizer_params, watched_params
from trainwell.doctor.events import BackwardEvent, StepEvent
from trainwell.doctor.lang import told


_MISSING_WORDS = {
    "optimizer": {"en": ("optimizer.step()", "clear them once per step, before backward(): optimizer.zero_grad()  "
                                             "# then loss.backward(); optimizer.step()"),
                  "zh": ("optimizer.step()", "每一步在 backward() 之前清空一次：optimizer.zero_grad()  "
                                             "# 然后 loss.backward(); optimizer.step()")},
    "manual": {"en": ("weight update (w -= lr * w.grad)",
                      "clear each gradient right after the update, inside torch.no_grad(): w -= lr * w.grad; "
                      "w.grad.zero_()  # or w.grad = None; or let torch.optim.SGD([w], lr=lr) do both"),
               "zh": ("权重更新（w -= lr * w.grad）",
                      "在 torch.no_grad() 里更新后立即清空梯度：w -= lr * w.grad; w.grad.zero_()  "
                      "# 或 w.grad = None；也可以用 torch.optim.SGD([w], lr=lr) 代劳")},
}


@register
class ZeroGradMissing(Check):
    id = "zero-grad-missing"
    loop_only = True
    severity = "error"
    summary = "gradients are never cleared, so they pile up across optimizer steps or hand-written updates"
    text = {
        "en": Text(
            title="Gradients are never cleared between steps",
            message="backward() adds to .grad instead of replacing it. At {count} backward calls in a row, the "
                    "gradients left from before the previous {update} were still there, so each step uses "
                    "the sum of all past gradients and training drifts or diverges.",
            fix="{fix}"),
        "zh": Text(
            title="每一步之间没有清空梯度",
            message="backward() 会把梯度累加到 .grad 上，而不是替换。连续 {count} 次调用 backward() 时，"
                    "上一次{update}之前的梯度仍然留着，所以每一步用的是所有历史梯度之和，训练会偏离甚至发散。",
            fix="{fix}"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.stepped_since_backward = False
        self.streak = 0
        # Hand-written updates (no optimizer): the leaves of the last backward's graph, with a copy of the
        # values backward() left them with, to tell whether the loop changed them since.
        self.leaves: list[torch.Tensor] = []
        self.snapshots: dict[int, tuple[weakref.ref[torch.Tensor], torch.Tensor]] = {}
        # The first watched parameter of the first optimizer, when it was found with its .grad set to None.
        # Valid while no new optimizer has appeared (session.optimizer_count): a new model (k-fold) is looked up.
        self.cleared: Callable[[], torch.Tensor | None] = lambda: None
        self.cleared_at = -1

    def on_backward_pre(self, ev: BackwardEvent) -> None:
        if self.stepped_since_backward:
            # The usual step: the parameter found cleared last time is cleared again (zero_grad(set_to_none=
            # True)): two attribute reads, no optimizer lookups.
            first = self.cleared() if self.cleared_at == self.session.optimizer_count else None
            if first is not None and first.grad is None:
                self.stepped_since_backward = False
                self.streak = 0
                return
        optimizers = self.session.live_optimizers()
        if not optimizers:
            self._manual_update(ev)
            return
        if not self.stepped_since_backward:
            return
        self.stepped_since_backward = False
        params: list[torch.Tensor] = []
        for opt in optimizers:
            watched = watched_optimizer_params(opt)
            for p in watched:  # (grad_is_clear, inlined: this runs every step)
                if p.grad is None or not bool(p.grad.any()):
                    self.streak = 0  # cleared since the last backward: the usual case
                    if p is watched[0] and opt is optimizers[0]:
                        self.cleared, self.cleared_at = weakref.ref(p), self.session.optimizer_count
                    return
            params += watched
        # Only tensors this loss still uses count: an old optimizer's tensors keep stale gradients when the
        # weights are re-created in the loop (params-recreated), and this backward() adds nothing to them.
        if params and _in_graph(params, ev.tensor):
            self._count(ev.where, "optimizer")
        else:
            self.streak = 0

    def _count(self, where: str | None, kind: str) -> None:
        self.streak += 1
        if self.streak >= 3 and not self.reported:
            update, fix = _MISSING_WORDS[kind].get(self.session.lang, _MISSING_WORDS[kind]["en"])
            self.report(where, {"backward_calls_without_clearing": self.streak, "updates": kind},
                        count=self.streak, update=update, fix=fix)

    def _manual_update(self, ev: BackwardEvent) -> None:
        """No optimizer: weights updated by hand between two backward() calls must have had .grad cleared."""
        if self.reported:
            return
        self.leaves = watched_params(_graph_leaves(ev.tensor), limit=4)
        updated = []
        for leaf in self.leaves:
            ref, before = self.snapshots.get(id(leaf), (None, None))
            if ref is not None and ref() is leaf and before is not None and not torch.equal(leaf.detach(), before):
                updated.append(leaf)
        if updated:
            if all(not grad_is_clear(p) for p in updated):
                self._count(ev.where, "manual")
            else:
                self.streak = 0

    def on_backward(self, ev: BackwardEvent) -> None:
        if self.session.optimizer_count or self.reported:
            self.snapshots.clear()
            return
        self.snapshots = {id(p): (weakref.ref(p), p.detach().clone()) for p in self.leaves}

    def on_step(self, ev: StepEvent) -> None:
        self.stepped_since_backward = True


def _in_graph(params: list[torch.Tensor], t: torch.Tensor) -> bool:
    leaves = {id(p) for p in _graph_leaves(t)}
    return any(id(p) in leaves for p in params)


def _graph_leaves(t: torch.Tensor, limit: int = 2000) -> list[torch.Tensor]:
    """The leaf tensors that backward() from ``t`` fills (.grad), found through the autograd graph."""
    found: list[torch.Tensor] = []
    todo, seen = [t.grad_fn], set()
    while todo and len(seen) < limit:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        leaf = getattr(fn, "variable", None)
        if isinstance(leaf, torch.Tensor):
            found.append(leaf)
        else:
            todo.extend(nxt for nxt, _ in fn.next_functions)
    return found


_MISPLACED_WORDS = {
    "before_step": {
        "headline": ("Gradients are cleared between backward() and step()", "在 backward() 和 step() 之间清空了梯度"),
        "story": ("When optimizer.step() ran, the gradients that backward() had just computed were already gone "
                  "(None or zero) on all {count} steps checked, so the weights are never updated by the loss.",
                  "执行 optimizer.step() 时，backward() 刚算出的梯度已经被清掉（None 或全零），检查的 {count} 步都是如此，"
                  "所以权重根本没有按损失更新。"),
        "remedy": ("put the clearing first: optimizer.zero_grad(); loss.backward(); optimizer.step()",
                   "先清空再反向传播：optimizer.zero_grad(); loss.backward(); optimizer.step()"),
    },
    "between_losses": {
        "headline": ("Gradients are cleared between two backward() calls: only the last loss trains",
                     "在两次 backward() 之间清空了梯度：只有最后一个损失在训练"),
        "story": ("On {count} steps checked, {lost} parameter tensors (e.g. {example}) had gradients from an earlier "
                  "backward() of the same step, and they were gone (None) when optimizer.step() ran. A zero_grad() "
                  "between the losses' backward() calls throws away every loss but the last one, so the parts of "
                  "the model that only the earlier losses reach never learn.",
                  "检查的 {count} 步中，有 {lost} 个参数张量（例如 {example}）在同一步里先前的 backward() 中得到了梯度，"
                  "但执行 optimizer.step() 时这些梯度已经没有了（None）。在各个损失的 backward() 之间调用 zero_grad() "
                  "会丢掉除最后一个以外的所有损失，只有前面的损失才能到达的那部分模型永远学不到东西。"),
        "remedy": ("clear once per step, before the first backward(): optimizer.zero_grad(); loss_a.backward(); "
                   "loss_b.backward(); optimizer.step()  # or (loss_a + loss_b).backward()",
                   "每一步只在第一次 backward() 之前清空一次：optimizer.zero_grad(); loss_a.backward(); "
                   "loss_b.backward(); optimizer.step()  # 或者 (loss_a + loss_b).backward()"),
    },
}


@register
class ZeroGradMisplaced(Check):
    id = "zero-grad-misplaced"
    loop_only = True
    severity = "error"
    summary = "gradients are cleared between backward() and step() (the step uses zeros), or between two backward()s"
    text = {
        "en": Text(title="{headline}", general="Gradients are cleared before optimizer.step() uses them",
                   message="{story}", fix="{remedy}"),
        "zh": Text(title="{headline}", general="梯度在 optimizer.step() 用到之前就被清空了", message="{story}",
                   fix="{remedy}"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.filled: set[int] = set()  # optimizers whose gradients the last backward() filled
        self.streak = 0
        self.first_where: str | None = None
        # id(optimizer) -> per backward() since its last step: ids of its parameters holding a gradient after it
        self.fills: dict[int, list[set[int]]] = {}
        self.lost_streak = 0
        self.lost_where: str | None = None

    # The mistake is in the loop's order, so it shows on every step: sampled steps are enough.
    @sampled_only
    def on_backward(self, ev: BackwardEvent) -> None:
        # Only gradients that backward() really wrote can be "cleared too early"; a model
        # rebuilt after its optimizer was made never fills them (that is params-not-in-optimizer).
        optimizers = self.session.optimizers
        self.filled = {id(opt) for opt in optimizers
                       if any(not grad_is_clear(p) for p in watched_optimizer_params(opt))}
        for opt in optimizers:
            fills = self.fills.setdefault(id(opt), [])
            if len(fills) < 8:
                fills.append({id(p) for p in optimizer_params(opt) if p.grad is not None})

    @sampled_only
    def on_step_pre(self, ev: StepEvent) -> None:
        self._between_losses(ev)
        if id(ev.optimizer) not in self.filled:
            return  # no fresh gradients to lose (a step without backward, an unused optimizer)
        self.filled.discard(id(ev.optimizer))
        losses = self.session.losses
        if losses and not math.isfinite(losses[-1]):
            return  # clipping an inf gradient norm zeroes the gradients: that is not the loop's order
        params = watched_optimizer_params(ev.optimizer)
        if params and all(grad_is_clear(p) for p in params):
            self.streak += 1
            self.first_where = self.first_where or ev.where
            if self.streak >= 3:
                self._report("before_step", self.first_where, {"steps_with_cleared_gradients": self.streak},
                             count=self.streak)
        else:
            self.streak = 0

    def _between_losses(self, ev: StepEvent) -> None:
        """Parameters an earlier backward() of this step filled that are None now: cleared between losses."""
        fills = self.fills.pop(id(ev.optimizer), [])
        if len(fills) < 2:
            return
        earlier = set().union(*fills[:-1])
        params = optimizer_params(ev.optimizer)
        lost = [p for p in params if id(p) in earlier and p.grad is None]
        if not lost:
            self.lost_streak = 0
            return
        self.lost_streak += 1
        self.lost_where = self.lost_where or ev.where
        if self.lost_streak >= 3:
            self._report("between_losses", self.lost_where, {"steps": self.lost_streak, "lost_tensors": len(lost)},
                         count=self.lost_streak, lost=len(lost), example=self._name(lost[0]))

    def _name(self, param: torch.Tensor) -> str:
        for model in self.session.models:
            for name, p in model.named_parameters():
                if p is param:
                    return name
        return f"a tensor of shape {tuple(param.shape)}"

    def _report(self, kind: str, where: str | None, evidence: dict[str, int], **values: object) -> None:
        self.report(where, {"kind": kind, **evidence}, **told(self.session.lang, _MISPLACED_WORDS[kind], **values))
