"""zero-grad-missing / zero-grad-misplaced: gradients never cleared, or cleared before the step.

zero-grad-misplaced has two forms: everything cleared between the last backward() and step() (the step
uses zeros), or gradients cleared between two backward() calls of one step (one zero_grad() per loss of a
multi-task model: the parameters only the earlier losses reach are None again when step() runs).

Both are judged from the gradients themselves, so every way of clearing counts
(``optimizer.zero_grad()``, ``model.zero_grad()``, ``p.grad = None``, ``p.grad.zero_()``),
and intended accumulation (clear every k steps, step every k backwards) stays quiet.
zero-grad-missing judges each optimizer on its own: between two of its steps, its gradients must be seen
cleared at some backward(), or no backward() may add to them. So zero_grad() on the wrong optimizer (a GAN's
other one, an optimizer left from an earlier model) is found, while a generator's backward() through the
critic, whose gradients the critic's next update clears, is not.
Hand-written gradient descent (no optimizer: ``w -= lr * w.grad`` under ``no_grad``) counts too:
the weights of the loss's graph changed since the last backward() and still carried its gradient.
"""

from __future__ import annotations

import linecache
import math
import re
import weakref
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_and_next, sampled_only
from trainwell.doctor.checks._grads import grad_is_clear, optimizer_params, watched_optimizer_params, watched_params
from trainwell.doctor.events import BackwardEvent, StepEvent
from trainwell.doctor.lang import told
from trainwell.doctor.where import user_name


_MISSING_WORDS = {
    # (For "other", {stepping} is how the script names the optimizer that steps, e.g. "final_opt".)
    "other": {"en": ("optimizer.step()", "zero_grad() clears only the parameters of the optimizer (or model) it is "
                                         "called on: another optimizer's gradients are cleared here, but not those of "
                                         "the one that steps. Clear the optimizer that steps, once per step, before "
                                         "backward(): {stepping}.zero_grad(); loss.backward(); {stepping}.step()  "
                                         "# or {model}.zero_grad()"),
              "zh": ("optimizer.step()", "zero_grad() 只清空被调用的那个优化器（或模型）的参数：这里另一个优化器的梯度"
                                         "被清空了，执行 step() 的那个却没有。每一步在 backward() 之前清空执行 step() 的那个："
                                         "{stepping}.zero_grad(); loss.backward(); {stepping}.step()  "
                                         "# 或者 {model}.zero_grad()")},
    "optimizer": {"en": ("optimizer.step()", "clear them once per step, before backward(): {stepping}.zero_grad()  "
                                             "# then loss.backward(); {stepping}.step()"),
                  "zh": ("optimizer.step()", "每一步在 backward() 之前清空一次：{stepping}.zero_grad()  "
                                             "# 然后 loss.backward(); {stepping}.step()")},
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
            message="backward() adds to .grad instead of replacing it. {count} times in a row, the gradients "
                    "from before the previous {update} were still there when the next backward() added to them, "
                    "so each step uses the sum of all past gradients and training drifts or diverges.",
            fix="{fix}"),
        "zh": Text(
            title="每一步之间没有清空梯度",
            message="backward() 会把梯度累加到 .grad 上，而不是替换。连续 {count} 次，上一次{update}之前的梯度"
                    "仍然留着，下一次 backward() 又累加到上面，所以每一步用的是所有历史梯度之和，训练会偏离甚至发散。",
            fix="{fix}"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.streak = 0  # hand-written updates in a row that added to old gradients
        # Hand-written updates (no optimizer): the leaves of the last backward's graph, with a copy of the
        # values backward() left them with, to tell whether the loop changed them since.
        self.leaves: list[torch.Tensor] = []
        self.snapshots: dict[int, tuple[weakref.ref[torch.Tensor], torch.Tensor]] = {}
        # id(optimizer) -> what was seen of its gradients since its last step. Judged per optimizer: in a GAN,
        # or with an optimizer left over from an earlier model, zero_grad() on one clears nothing of the other.
        self.steppers: dict[int, _Stepper] = {}

    @sampled_and_next  # judged in windows: each window's steps say whether the gradients were cleared
    def on_backward_pre(self, ev: BackwardEvent) -> None:
        if not self.steppers:  # no optimizer has stepped (yet): hand-written updates, or the first backward()
            self._manual_update(ev)
            return
        dead = []
        for key, st in self.steppers.items():
            if not st.pending:
                continue
            opt = st.ref()
            if opt is None:
                dead.append(key)
                continue
            watched = watched_optimizer_params(opt)
            if _all_clear(watched):
                st.pending = False  # cleared since its last step
            elif not st.carried:
                # A backward() begins while gradients still hold what the last step used. It adds to them if
                # it reaches them: their versions tell at the optimizer's next step.
                st.carried = True
                st.seen = [(weakref.ref(p), p.grad, p.grad._version) for p in watched if p.grad is not None]
                if st.streak >= 2:  # the next step reports: say where
                    st.where = ev.where
        for key in dead:
            del self.steppers[key]
        if dead and not self.steppers:  # every optimizer is gone: updates by hand from now on, maybe
            self._manual_update(ev)

    @sampled_and_next
    def on_step(self, ev: StepEvent) -> None:
        opt = ev.optimizer
        st = self.steppers.get(id(opt))
        if st is None or st.ref() is not opt:
            st = self.steppers[id(opt)] = _Stepper(opt)
        elif st.pending and st.carried and st.added_to():
            st.streak += 1  # this step used its earlier steps' gradients too
            if st.streak >= 3 and not self.reported:
                self._report_optimizer(opt, st, ev)
        else:
            st.streak = 0
        st.pending, st.carried, st.seen, st.where = True, False, [], None

    def _report_optimizer(self, opt: torch.optim.Optimizer, st: _Stepper, ev: StepEvent) -> None:
        """Said once its steps summed old gradients 3 times in a row. With one optimizer it points at the
        backward() that adds to them; with several, at this optimizer's step() (which one is left uncleared),
        and says when another optimizer's gradients were cleared meanwhile (zero_grad() on the wrong one)."""
        live = [o for o in self.session.live_optimizers() if o is not opt]
        # Another optimizer whose gradients were seen cleared since its own last step.
        others = [o for o in live if (other := self.steppers.get(id(o))) is not None and other.ref() is o
                  and not other.pending]
        words = _MISSING_WORDS["other" if others else "optimizer"]
        update, fix = words.get(self.session.lang, words["en"])
        # The script's own names for the optimizer and its model (``net.zero_grad()``), else generic words.
        fix = fix.format(stepping=user_name(opt) or _receiver(ev.where) or "optimizer",
                         model=_model_name(self.session, opt) or "model")
        evidence = {"steps_adding_to_old_gradients": st.streak, "updates": "optimizer",
                    "optimizer": type(opt).__name__, "other_optimizer_cleared": bool(others)}
        self.report(ev.where if live else st.where, evidence, count=st.streak, update=update, fix=fix)

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

    @sampled_and_next
    def on_backward(self, ev: BackwardEvent) -> None:
        if self.session.optimizer_count or self.reported:
            self.snapshots.clear()
            return
        self.snapshots = {id(p): (weakref.ref(p), p.detach().clone()) for p in self.leaves}


def _model_name(session: Any, opt: torch.optim.Optimizer) -> str | None:
    """How the script names the model whose parameters ``opt`` trains (None: no model seen, or no name found)."""
    owned = {id(p) for g in opt.param_groups for p in g["params"]}
    for model in list(session.models):
        if any(id(p) in owned for p in model.parameters()):
            return user_name(model)
    return None


def _receiver(where: str | None) -> str | None:
    """How the script names the optimizer whose ``.step()`` is called on the line ``where`` ("path:line")."""
    if not where or ":" not in where:
        return None
    path, _, line = where.rpartition(":")
    found = _STEP_CALL.search(linecache.getline(path, int(line))) if line.isdigit() else None
    return found.group(1) if found else None


_STEP_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\.\s*step\s*\(")


class _Stepper:
    """One optimizer between two of its steps: were its gradients cleared, or carried into a backward()?"""

    __slots__ = ("ref", "pending", "carried", "seen", "streak", "where")

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.ref = weakref.ref(optimizer)
        self.pending = True  # stepped, and its gradients not seen cleared since
        self.carried = False  # a backward() began while they held what the last step used ...
        # ... these (watched parameter, its gradient, the gradient's version then): a gradient that is still the
        # parameter's at a later version has been added to (backward() accumulates in place).
        self.seen: list[tuple[weakref.ref[torch.Tensor], torch.Tensor, int]] = []
        self.streak = 0  # steps in a row that summed old gradients
        self.where: str | None = None

    def added_to(self) -> bool:
        return any((p := ref()) is not None and p.grad is grad and grad._version != version
                   for ref, grad, version in self.seen)


def _all_clear(params: list[torch.Tensor]) -> bool:
    """No parameter holds a non-zero gradient: all of them, not one, since a parameter the loss never reaches
    (a layer defined and not used) has no gradient to clear. Gradients filled with zeros
    (``zero_grad(set_to_none=False)``) cost a tensor op each to read: two are read, the rest taken alike."""
    read = 0
    for p in params:
        g = p.grad
        if g is not None:
            if read == 2:
                return True
            if bool(g.any()):
                return False
            read += 1
    return True


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
        "remedy": ("put the clearing first: {opt}.zero_grad(); loss.backward(); {opt}.step()",
                   "先清空再反向传播：{opt}.zero_grad(); loss.backward(); {opt}.step()"),
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
        "remedy": ("clear once per step, before the first backward(): {opt}.zero_grad(); loss_a.backward(); "
                   "loss_b.backward(); {opt}.step()  # or (loss_a + loss_b).backward()",
                   "每一步只在第一次 backward() 之前清空一次：{opt}.zero_grad(); loss_a.backward(); "
                   "loss_b.backward(); {opt}.step()  # 或者 (loss_a + loss_b).backward()"),
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
                             count=self.streak, opt=user_name(ev.optimizer) or "optimizer")
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
                         count=self.lost_streak, lost=len(lost), example=self._name(lost[0]),
                         opt=user_name(ev.optimizer) or "optimizer")

    def _name(self, param: torch.Tensor) -> str:
        for model in self.session.models:
            for name, p in model.named_parameters():
                if p is param:
                    return name
        return f"a tensor of shape {tuple(param.shape)}"

    def _report(self, kind: str, where: str | None, evidence: dict[str, int], **values: object) -> None:
        self.report(where, {"kind": kind, **evidence}, **told(self.session.lang, _MISPLACED_WORDS[kind], **values))
