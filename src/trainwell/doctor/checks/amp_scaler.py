"""Mixed precision with float16: the loss scaler missing, clipping scaled gradients, and a scale that never adapts.

float16 keeps about 5 significant bits of exponent below 1, so small gradients underflow to zero unless the
loss is multiplied first (``GradScaler.scale``) and the gradients divided back before the step. Judged from
the autocast state while a model's forward runs (``torch.is_autocast_enabled`` / ``get_autocast_dtype`` for
each device type) and the calls to the scaler, clipping and ``backward()``, in their order; bfloat16 needs no
scaler and is never flagged.

- fp16-without-grad-scaler: ``backward()`` after forwards under float16 autocast whose output carries gradients
  (a frozen teacher's does not), on a loss no enabled scaler scaled since; three such backward calls are needed.
- clip-before-unscale: gradient clipping while an enabled scaler has scaled this step's loss and nobody has
  called ``unscale_`` yet: the clip then measures gradients tens of thousands of times too large.
- grad-scaler-update-missing: ``scaler.step(optimizer)`` again on the same scaler and optimizer with no
  ``update()`` between (PyTorch then stops with "step() has already been called since the last update()"), or
  three scalers that each step and are never updated (a new GradScaler made every iteration).
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register
from trainwell.doctor.events import BackwardEvent, CallEvent, ForwardEvent
from trainwell.doctor.where import user_name

DEVICE_TYPES = ("cuda", "cpu", "xpu", "mps")
_any_autocast = getattr(torch._C, "_is_any_autocast_enabled", lambda: True)
UNSCALED_BACKWARDS = 3  # fp16 backward calls without a scaled loss before reporting
FRESH_SCALERS = 3  # scalers that step and are never updated before reporting


def fp16_autocast() -> str | None:
    """The device type whose autocast is on with float16 right now, or None."""
    if not _any_autocast():  # one call for the usual case: no autocast at all
        return None
    for device in DEVICE_TYPES:
        if torch.is_autocast_enabled(device) and torch.get_autocast_dtype(device) == torch.float16:
            return device
    return None


def _trains(output: Any) -> bool:
    """Whether a forward's output (a tensor, or a tuple / list / dict of them) carries gradients."""
    values = output.values() if isinstance(output, dict) else output if isinstance(output, (tuple, list)) else [output]
    return any(isinstance(v, torch.Tensor) and v.requires_grad for v in values)


def _enabled(scaler: Any) -> bool:
    return bool(scaler.is_enabled())


@register
class Fp16WithoutGradScaler(Check):
    id = "fp16-without-grad-scaler"
    loop_only = True
    severity = "warning"
    summary = "float16 autocast training without a GradScaler: small gradients underflow to zero"
    text = {
        "en": Text(
            title="float16 mixed precision without a GradScaler",
            message="The model ran under torch.autocast(dtype=torch.float16) on {device}, and backward() was called "
                    "{count} times on a loss that no GradScaler had scaled. float16 cannot hold values below about "
                    "6e-8, so many gradients round to zero and those weights stop learning (or the loss turns "
                    "inf/NaN with nothing to skip the step). bfloat16 has float32's range and needs no scaler.",
            fix="scaler = torch.amp.GradScaler(); scaler.scale(loss).backward(); scaler.step(optimizer); "
                "scaler.update()  # or use dtype=torch.bfloat16"),
        "zh": Text(
            title="使用 float16 混合精度却没有 GradScaler",
            message="模型在 {device} 上以 torch.autocast(dtype=torch.float16) 运行，而 backward() 有 {count} 次是在"
                    "没有经过 GradScaler 缩放的损失上调用的。float16 无法表示小于约 6e-8 的数，很多梯度会被舍入为零，"
                    "对应的权重就不再学习（或者损失变成 inf/NaN 却没有机制跳过这一步）。bfloat16 的数值范围与 float32 "
                    "相同，不需要 scaler。",
            fix="scaler = torch.amp.GradScaler(); scaler.scale(loss).backward(); scaler.step(optimizer); "
                "scaler.update()  # 或者改用 dtype=torch.bfloat16"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.fp16_device: str | None = None  # a training forward ran under float16 autocast since the last backward
        self.scaled = False  # an enabled scaler scaled a loss since the last backward
        self.count = 0
        self.where: str | None = None
        self.fp16_seen: str | None = None  # a device some training forward ran under float16 autocast on

    RELAX = 200  # steps without float16 autocast, after which only sampled steps are looked at

    def on_forward(self, ev: ForwardEvent) -> None:
        if ev.grad_enabled and not self.reported:
            device = fp16_autocast()  # (first: without autocast, one call and nothing else; this runs every step)
            if device is not None and _trains(ev.output):  # not a frozen teacher's forward
                self.fp16_device = self.fp16_seen = device

    def on_call(self, ev: CallEvent) -> None:
        if ev.name == "scaler.scale" and _enabled(ev.owner):
            self.scaled = True

    def on_backward_pre(self, ev: BackwardEvent) -> None:
        device, scaled = self.fp16_device, self.scaled
        self.fp16_device, self.scaled = None, False
        if device is None or scaled or self.reported or not ev.tensor.requires_grad:
            if self.fp16_seen is None and self.session.step >= self.RELAX:
                self.session.relax(self, "on_forward", "on_backward_pre")  # no float16 autocast in this run
            return
        self.count += 1
        self.where = self.where or ev.where
        if self.count >= UNSCALED_BACKWARDS:
            self.report(self.where, {"autocast_device": device, "unscaled_fp16_backward_calls": self.count},
                        device=device, count=self.count)


class _ScalerState:
    """What one GradScaler has done since its last ``update()``."""

    def __init__(self) -> None:
        self.scaled = False
        self.unscaled = False
        self.stepped: set[int] = set()  # ids of the optimizers it stepped since its last update
        self.steps = 0


class _ScalerWatch(Check):
    """Shared bookkeeping: the state of every enabled scaler, kept from its calls."""

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.scalers: weakref.WeakKeyDictionary[Any, _ScalerState] = weakref.WeakKeyDictionary()
        self.stepping_scalers = 0  # scalers that stepped at least once (also those garbage-collected since)
        self.updated = False  # some scaler was updated

    def on_call(self, ev: CallEvent) -> None:
        if not ev.name.startswith("scaler.") or not _enabled(ev.owner):
            if ev.name == "clip_grad":
                self.clipped(ev)
            return
        state = self.scalers.setdefault(ev.owner, _ScalerState())
        if ev.name == "scaler.scale":
            state.scaled = True
        elif ev.name == "scaler.unscale_":
            state.unscaled = True
        elif ev.name == "scaler.step":
            self.stepping_scalers += not state.steps
            state.steps += 1
            self.stepping(ev, state)
            state.stepped.add(id(ev.args[0]) if ev.args else 0)
        elif ev.name == "scaler.update":
            state.scaled = state.unscaled = False
            state.stepped.clear()
            self.updated = True

    def clipped(self, ev: CallEvent) -> None: ...

    @staticmethod
    def _scale_and_names(ev: CallEvent) -> tuple[float, dict[str, str]]:
        """The loss scale (a device read) and the user's names for the scaler and optimizer: only when reporting."""
        return float(ev.owner.get_scale()), {"scaler": user_name(ev.owner) or "scaler",
                                             "opt": (user_name(ev.args[0]) if ev.args else None) or "optimizer"}

    def stepping(self, ev: CallEvent, state: _ScalerState) -> None: ...


@register
class ClipBeforeUnscale(_ScalerWatch):
    id = "clip-before-unscale"
    loop_only = True
    severity = "error"
    summary = "gradients clipped while still multiplied by the GradScaler's scale (unscale_ missing before the clip)"
    text = {
        "en": Text(
            title="Gradients clipped before scaler.unscale_()",
            message="Gradient clipping ran while the GradScaler's scale (now {scale}) was still in the gradients: "
                    "scaler.scale(loss).backward() multiplies every gradient by it, and scaler.step() divides it back "
                    "only afterwards. The clip therefore measured a norm about {scale} times too large and shrank "
                    "the gradients far below the max_norm you meant, so training barely moves.",
            fix="unscale first: {scaler}.unscale_({opt}); torch.nn.utils.clip_grad_norm_({model}.parameters(), 1.0); "
                "{scaler}.step({opt}); {scaler}.update()"),
        "zh": Text(
            title="在 scaler.unscale_() 之前裁剪了梯度",
            message="梯度裁剪执行时，梯度中仍然带着 GradScaler 的缩放因子（当前为 {scale}）："
                    "scaler.scale(loss).backward() 会把每个梯度乘以它，而 scaler.step() 之后才会除回去。"
                    "因此裁剪测到的范数大约大了 {scale} 倍，把梯度缩得远小于你设定的 max_norm，训练几乎不动。",
            fix="先取消缩放：{scaler}.unscale_({opt}); torch.nn.utils.clip_grad_norm_({model}.parameters(), 1.0); "
                "{scaler}.step({opt}); {scaler}.update()"),
    }

    def _names(self, scaler: Any, ev: CallEvent) -> dict[str, str]:
        """The script's names for the scaler, the optimizer and the model of the clipped parameters (else generic)."""
        first = ev.args[0] if ev.args else ev.kwargs.get("parameters")
        if isinstance(first, torch.Tensor):
            first = [first]
        # Only a list or tuple is read: the clip has not run yet, and a generator (model.parameters()) read here
        # would reach it empty. Without the parameters, the optimizer and the model keep generic words.
        clipped = {id(p) for p in first} if isinstance(first, (list, tuple)) else set()
        if not clipped and len(self.session.live_optimizers()) == 1:
            opt_only = self.session.live_optimizers()[0]
            clipped = {id(p) for g in opt_only.param_groups for p in g["params"]}
        opt = next((o for o in self.session.live_optimizers()
                    if any(id(p) in clipped for g in o.param_groups for p in g["params"])), None)
        model = next((m for m in list(self.session.models) if any(id(p) in clipped for p in m.parameters())), None)
        return {"scaler": user_name(scaler) or "scaler",
                "opt": (user_name(opt) if opt is not None else None) or "optimizer",
                "model": (user_name(model) if model is not None else None) or "model"}

    def clipped(self, ev: CallEvent) -> None:
        for scaler, state in list(self.scalers.items()):
            if state.scaled and not state.unscaled and not self.reported:
                scale = float(scaler.get_scale())
                if scale > 1:
                    self.report(ev.where, {"loss_scale": scale}, scale=scale, **self._names(scaler, ev))


@register
class GradScalerUpdateMissing(_ScalerWatch):
    id = "grad-scaler-update-missing"
    loop_only = True
    severity = "error"
    summary = "scaler.step() without scaler.update(): the loss scale never adapts (or PyTorch stops at the next step)"
    text = {
        "en": Text(
            title="scaler.update() is never called after scaler.step()",
            message="{what} GradScaler.update() is what lowers the scale after an overflow (the step was skipped) "
                    "and raises it again after a run of good steps; without it the scale stays at {scale} and "
                    "PyTorch refuses a second scaler.step() with \"step() has already been called since the last "
                    "update()\".",
            fix="call update once per iteration, after the step, and create the scaler once before the loop: "
                "{scaler}.step({opt}); {scaler}.update()"),
        "zh": Text(
            title="scaler.step() 之后从未调用 scaler.update()",
            message="{what_zh} GradScaler.update() 负责在溢出（这一步被跳过）后降低缩放因子，并在连续正常的步骤之后"
                    "再把它调高；不调用它，缩放因子就一直停在 {scale}，而且 PyTorch 会拒绝第二次 scaler.step()，"
                    "报错 \"step() has already been called since the last update()\"。",
            fix="在循环之前只创建一次 scaler，每次迭代在 step 之后调用一次 update：{scaler}.step({opt}); {scaler}.update()"),
    }

    @staticmethod
    def _scale_and_names(ev: CallEvent) -> tuple[float, dict[str, str]]:
        """The loss scale (a device read) and the user's names for the scaler and optimizer: only when reporting."""
        return float(ev.owner.get_scale()), {"scaler": user_name(ev.owner) or "scaler",
                                             "opt": (user_name(ev.args[0]) if ev.args else None) or "optimizer"}

    def stepping(self, ev: CallEvent, state: _ScalerState) -> None:
        if self.reported:
            return
        if ev.args and id(ev.args[0]) in state.stepped:
            scale, names = self._scale_and_names(ev)
            self.report(ev.where, {"loss_scale": scale}, scale=scale, **names,
                        what="scaler.step(optimizer) was called a second time with no scaler.update() in between.",
                        what_zh="scaler.step(optimizer) 在两次调用之间没有调用 scaler.update()。")
            return
        fresh = self.stepping_scalers
        if fresh >= FRESH_SCALERS and not self.updated:
            scale, names = self._scale_and_names(ev)
            self.report(ev.where, {"scalers_stepped_never_updated": fresh, "loss_scale": scale},
                        scale=scale, **names,
                        what=f"{fresh} different GradScalers each stepped the optimizer and none was ever "
                             "updated: a new scaler is created every iteration, so each starts from the initial scale.",
                        what_zh=f"有 {fresh} 个不同的 GradScaler 各自执行了 step，却没有一个调用过 update："
                                "每次迭代都新建了 scaler，所以每次都从初始缩放因子开始。")
