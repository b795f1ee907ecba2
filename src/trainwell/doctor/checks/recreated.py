"""params-recreated: the weights are created again inside the training loop, so training restarts every step.

Two shapes of the same bug, both judged from object lifetimes:

* a new optimizer every iteration over brand-new tensors of the same shapes (``w = torch.randn(...,
  requires_grad=True); opt = SGD([w])`` inside the loop): each optimizer steps once and is dropped,
  and the next one starts from fresh values, not from the updated ones;
* an optimizer built once, while the loop makes a new tensor of the same shape on every iteration:
  the loss depends on the new tensor (which no optimizer owns), and the optimizer's own tensor
  never gets a gradient.

Carrying the values forward (``w = w.detach().requires_grad_()``) starts from the updated values and
is not reported; nor are new leaves that no optimizer's tensor mirrors
(adversarial perturbations, inputs that require grad for a gradient penalty).
"""

from __future__ import annotations

import sys
import weakref
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from trainwell.doctor.check import Check, Text, register, sampled_and_first_step, sampled_only
from trainwell.doctor.checks._grads import optimizer_params
from trainwell.doctor.checks.zero_grad import _graph_leaves
from trainwell.doctor.checks._names import UserNames, _scopes
from trainwell.doctor.events import BackwardEvent, ForwardEvent, StepEvent
from trainwell.doctor.lang import pick

if TYPE_CHECKING:
    from trainwell.doctor.session import Session

MAX_COPY = 1 << 16  # values kept to compare the next optimizer's tensors with


def _shapes(params: list[torch.Tensor]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(p.shape) for p in params)


@register
class ParamsRecreated(Check):
    id = "params-recreated"
    loop_only = True
    severity = "error"
    summary = "the weights are created again inside the training loop, so every step starts from scratch"
    text = {
        "en": Text(
            title="The weights are created again on every iteration",
            message="{story} The weights you train must be created once, before the loop: a tensor made with "
                    "requires_grad=True (or torch.randn / torch.zeros) inside the loop is a new, untrained tensor "
                    "every time, so whatever the previous step learned is thrown away and the loss never goes down.",
            fix="create the weights and the optimizer once, before the loop, and only use them inside it: "
                "w = torch.randn(n_in, n_out, requires_grad=True); optimizer = torch.optim.SGD([w, b], lr=0.1)  "
                "# then: for epoch in range(...): loss = ...; optimizer.zero_grad(); loss.backward(); optimizer.step()"),
        "zh": Text(
            title="每次迭代都重新创建了权重",
            message="{story}要训练的权重必须在循环之前只创建一次：在循环里用 requires_grad=True（或 torch.randn / "
                    "torch.zeros）创建的张量每次都是一个全新的、未训练的张量，上一步学到的东西全被丢掉，损失永远降不下来。",
            fix="在循环之前只创建一次权重和优化器，循环里只使用它们：w = torch.randn(n_in, n_out, requires_grad=True); "
                "optimizer = torch.optim.SGD([w, b], lr=0.1)  # 然后：for epoch in range(...): loss = ...; "
                "optimizer.zero_grad(); loss.backward(); optimizer.step()"),
    }

    STREAK = 3  # iterations in a row showing it

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        # A new optimizer per iteration.
        self.last_opt: weakref.ref[torch.optim.Optimizer] | None = None
        self.last_after: list[torch.Tensor] = []  # its tensors' values after its step (small ones only)
        self.last_shapes: tuple[tuple[int, ...], ...] = ()
        self.last_ptrs: set[int] = set()
        self.fresh_optimizers = 0
        self.seen: weakref.WeakSet[torch.optim.Optimizer] = weakref.WeakSet()
        # A stale optimizer next to new tensors.
        self.prev_leaves: set[int] = set()
        self.stale_streak = 0
        self.where: str | None = None
        # Parameters (nn.Parameter) no optimizer owns, new on every iteration: a layer made inside the loop or
        # inside forward(). id(parameter) -> the layer it belongs to, from the last sampled forward's leaf calls.
        self.layers: dict[int, nn.Module] = {}
        self.fresh_streak = 0
        self.models: weakref.WeakSet[nn.Module] = weakref.WeakSet()  # top-level models seen on sampled steps

    @sampled_and_first_step  # a new optimizer's first step shows it, whenever it comes
    def on_step_pre(self, ev: StepEvent) -> None:
        if self.reported:
            return
        opt = ev.optimizer
        last = self.last_opt() if self.last_opt is not None else None
        if last is opt:
            return
        # A different optimizer: a fresh one over new tensors shaped like the last one's, which stepped once,
        # and not starting from their updated values.
        params = [p for p in optimizer_params(opt) if p.requires_grad]
        # (An optimizer seen before is a turn-taking one: a GAN, two networks trained side by side.)
        new = (opt not in self.seen and self.session.previous_optimizer_steps == 1 and bool(params)
               and _shapes(params) == self.last_shapes and self._restarted(params))
        self.fresh_optimizers = self.fresh_optimizers + 1 if new else 0
        self.last_opt = weakref.ref(opt)
        self.seen.add(opt)
        if self.fresh_optimizers >= self.STREAK:
            names = UserNames.of(sys._getframe(), opt)
            made = names.params[:-len(".parameters()")] if names.params.endswith(".parameters()") else names.params
            self.report(ev.where, {"optimizers_used_once": self.fresh_optimizers + 1, "shapes": _shapes(params)},
                        story=self._words(
                            f"Each iteration builds a new optimizer over new weight tensors (shapes "
                            f"{', '.join(str(s) for s in _shapes(params))}) and steps it once; the next iteration "
                            f"starts again from freshly created values instead of the updated ones "
                            f"({self.fresh_optimizers + 1} iterations in a row): `{names.optimizer}` and `{made}` are "
                            f"created inside the loop.",
                            f"每次迭代都新建一个优化器、管理新建的权重张量（形状 "
                            f"{', '.join(str(s) for s in _shapes(params))}），只更新一次；下一次迭代又从新创建的值开始，"
                            f"而不是从更新后的值开始（连续 {self.fresh_optimizers + 1} 次迭代）：`{names.optimizer}` 和 "
                            f"`{made}` 是在循环里创建的。"))

    @sampled_and_first_step
    def on_step(self, ev: StepEvent) -> None:
        if self.reported or self.last_opt is None or self.last_opt() is not ev.optimizer:
            return
        if self.session.steps_in_a_row == 0:  # its first step: the values a carried-forward tensor would start from
            self._keep([p for p in optimizer_params(ev.optimizer) if p.requires_grad])

    def _keep(self, params: list[torch.Tensor]) -> None:
        if sum(p.numel() for p in params) <= MAX_COPY:
            self.last_after = [p.detach().clone() for p in params]
        else:
            self.last_after = []
        self.last_shapes = _shapes(params)
        self.last_ptrs = {p.data_ptr() for p in params}

    def _restarted(self, params: list[torch.Tensor]) -> bool:
        """New tensors that do not start from the last optimizer's updated values (carried forward, they would be
        equal to them). Tensors too big to keep a copy of are compared by memory: not the same storage."""
        if self.last_after:
            return not all(torch.equal(p.detach(), old) for p, old in zip(params, self.last_after))
        return not any(p.data_ptr() in self.last_ptrs for p in params)

    @sampled_only
    def on_backward_pre(self, ev: BackwardEvent) -> None:
        if self.reported or not self.session.optimizers:
            return
        leaves = _graph_leaves(ev.tensor)
        ids = {id(t) for t in leaves}
        owned = self.session.trained_params()
        new_unowned: dict[tuple[int, ...], torch.Tensor] = {tuple(t.shape): t for t in leaves
                                                             if id(t) not in owned and id(t) not in self.prev_leaves}
        self.prev_leaves = ids
        stale: list[tuple[int, ...]] = []
        for opt in list(self.session.optimizers):
            for p in optimizer_params(opt):
                if p.requires_grad and p.grad is None and id(p) not in ids and tuple(p.shape) in new_unowned:
                    stale.append(tuple(p.shape))
        self.stale_streak = self.stale_streak + 1 if stale else 0
        fresh = [t for t in new_unowned.values() if isinstance(t, nn.Parameter)]
        self.fresh_streak = self.fresh_streak + 1 if fresh and not stale and self.fresh_optimizers == 0 else 0
        if self.fresh_streak >= self.STREAK:
            self._report_fresh(ev, fresh)
            return
        if self.stale_streak >= self.STREAK:
            made = _names_of([t for t in new_unowned.values() if tuple(t.shape) in stale], sys._getframe())
            shown = ", ".join(str(s) for s in stale[:4]) + (f"; made as {made}" if made else "")
            self.report(ev.where, {"stale_shapes": stale[:8], "iterations": self.stale_streak},
                        story=self._words(
                            f"The optimizer holds weight tensors (shapes {shown}) that never get a gradient, while on "
                            f"each of the last {self.stale_streak} iterations the loss was computed from a newly "
                            f"created tensor of the same shape that no optimizer owns: the weights are created again "
                            f"inside the loop, so the optimizer updates the old ones and the model uses new, "
                            f"untrained ones.",
                            f"优化器里的权重张量（形状 {shown}）从来没有得到梯度，而在最近 {self.stale_streak} 次迭代中，"
                            f"损失每次都是用一个新创建的、形状相同、不属于任何优化器的张量算出来的：权重在循环里被重新创建，"
                            f"优化器更新的是旧张量，模型用的却是新的、未训练的张量。"))

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.reported or not ev.grad_enabled:
            return
        self.layers = {id(p): m for m, _, _ in ev.leaf_calls for p in m.parameters(recurse=False)}
        self.models.add(ev.module)

    def _report_fresh(self, ev: BackwardEvent, fresh: list[torch.Tensor]) -> None:
        """New nn.Parameters on every iteration that no optimizer owns: layers created inside the loop or inside
        forward(), trained by nobody and thrown away after each step."""
        layers = [self.layers[id(p)] for p in fresh if id(p) in self.layers]
        registered = {id(m) for model in self.models for m in model.modules()}
        unregistered = [m for m in layers if id(m) not in registered]
        named = _names_of(fresh, sys._getframe())
        if unregistered:
            what = ", ".join(dict.fromkeys(_describe(m) for m in unregistered))
            en = (f"On each of the last {self.fresh_streak} iterations the model used a newly created layer "
                  f"({what}) that is not one of its registered sub-modules and that no optimizer owns: the layer is "
                  f"built inside forward() (or inside the loop), so its weights start from random values on every "
                  f"call and are never trained.")
            zh = (f"在最近 {self.fresh_streak} 次迭代中，模型每次都用了一个新创建的层（{what}），它不是模型注册过的子模块，"
                  f"也不属于任何优化器：这个层是在 forward()（或循环）里创建的，每次调用权重都从随机值开始，永远得不到训练。")
        else:
            shapes = ", ".join(str(tuple(p.shape)) for p in fresh[:4])
            where = f" ({named})" if named else ""
            en = (f"On each of the last {self.fresh_streak} iterations the loss was computed from new nn.Parameter "
                  f"tensors{where} (shapes {shapes}) that no optimizer owns: they are created again inside the loop, "
                  f"so the optimizer never updates what the model uses.")
            zh = (f"在最近 {self.fresh_streak} 次迭代中，损失每次都是用新的 nn.Parameter 张量{where}（形状 {shapes}）"
                  f"算出来的，而它们不属于任何优化器：它们在循环里被重新创建，优化器从来没有更新模型实际用到的参数。")
        self.report(ev.where, {"new_parameters": [tuple(p.shape) for p in fresh[:8]], "iterations": self.fresh_streak,
                               "layers": [_describe(m) for m in unregistered[:4]], "names": named},
                    story=self._words(en, zh))

    def _words(self, en: str, zh: str) -> str:
        return pick(self.session.lang, en, zh)


def _describe(module: nn.Module) -> str:
    text = repr(module)
    return text if len(text) <= 80 else type(module).__name__


def _names_of(tensors: list[torch.Tensor], frame: Any) -> str:
    """The user's names for ``tensors`` (``W, b`` or ``model.weight``), from the user's frames; "" if none."""
    ids = {id(t): t for t in tensors}
    found: dict[int, str] = {}
    try:
        for scope in _scopes(frame):
            for name, value in scope:
                if name.startswith("__"):
                    continue
                if id(value) in ids:
                    found.setdefault(id(value), name)
                elif isinstance(value, nn.Module):
                    for pname, p in value.named_parameters():
                        if id(p) in ids:
                            found.setdefault(id(p), f"{name}.{pname}")
    except Exception:  # noqa: BLE001 - names are a nicety
        return ""
    return ", ".join(found[i] for i in ids if i in found)
