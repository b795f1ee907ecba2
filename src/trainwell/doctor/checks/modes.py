"""eval-mode-missing / train-mode-missing: Dropout and BatchNorm left in the wrong mode.

Both are judged from the modules' ``training`` flags at the moment the model is called and
from what the call is used for (evaluation under ``no_grad`` vs. a forward that an optimizer
step then uses), never from names. Only modules whose behaviour differs between the modes
count: BatchNorm that tracks running statistics, Dropout with ``p > 0``.
"""

from __future__ import annotations

import weakref
from collections import deque
from typing import Any

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.dropout import _DropoutNd

from trainwell.doctor.check import Check, Text, register, sampled_and_evaluation, sampled_and_next
from trainwell.doctor.events import ForwardEvent, StepEvent
from trainwell.doctor.where import user_name


def _mode_dependent(m: nn.Module) -> bool:
    """Whether ``m`` computes something different in train and eval mode."""
    if isinstance(m, _BatchNorm):
        return m.track_running_stats  # without running stats, eval mode uses batch statistics too
    if isinstance(m, _DropoutNd):
        return m.p > 0
    if isinstance(m, nn.RNNBase):
        return m.dropout > 0 and m.num_layers > 1
    if isinstance(m, nn.MultiheadAttention):
        return m.dropout > 0
    return False


class _ModeModules:
    """Per model: its mode-dependent modules and each one's parent, refreshed now and then."""

    def __init__(self) -> None:
        self._cache: weakref.WeakKeyDictionary[nn.Module, tuple[int, list[tuple[nn.Module, nn.Module]]]] = \
            weakref.WeakKeyDictionary()

    def get(self, model: nn.Module, step: int, refresh: bool) -> list[tuple[nn.Module, nn.Module]]:
        """``(module, parent)`` pairs; re-read when ``refresh`` and the step moved (the model may have changed)."""
        hit = self._cache.get(model)
        if hit is not None and not (refresh and hit[0] != step):
            return hit[1]
        pairs = [(child, parent) for parent in model.modules() for child in parent.children()
                 if _mode_dependent(child)]
        if _mode_dependent(model):
            pairs.append((model, model))
        self._cache[model] = (step, pairs)
        return pairs


def _tensors(x: Any) -> list[torch.Tensor]:
    """The tensors directly in ``x`` (a tensor, or one level of tuple / list / dict)."""
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for t in x if isinstance(t, torch.Tensor)]
    if isinstance(x, dict):
        return [t for t in x.values() if isinstance(t, torch.Tensor)]
    return []


def _storage(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - sparse, nested or subclass tensors without one storage
        return -1


def _fingerprint(x: torch.Tensor | None) -> tuple[Any, ...] | None:
    """Shape and two sums: equal for the same data passed again, different for a new batch."""
    if x is None or x.numel() == 0 or x.ndim == 0 or x.is_complex():
        return None
    v = x.detach()[:64].reshape(-1)  # a few rows, a few thousand values: cheap even for a large set
    v = v[:: max(1, v.numel() // 4096)].double()
    ramp = torch.linspace(0.5, 1.5, v.numel(), dtype=v.dtype, device=v.device)
    return tuple(x.shape), float(v.sum()), float((v * ramp).sum())


@register
class EvalModeMissing(Check):
    id = "eval-mode-missing"
    loop_only = True
    severity = "warning"
    summary = "a model with Dropout / BatchNorm evaluated under no_grad while still in training mode"
    text = {
        "en": Text(
            title="Model evaluated without model.eval()",
            message="{model} was called {count} times with gradients off (torch.no_grad), which is how evaluation "
                    "is done, but its {modules} were still in training mode. Dropout keeps dropping random units "
                    "and BatchNorm normalizes with the statistics of each evaluation batch and overwrites its "
                    "running averages with evaluation data, so the validation numbers are noisy and too pessimistic, "
                    "and the trained model is changed by evaluating it.",
            fix="switch modes around evaluation: {name}.eval()  # before the validation loop; then {name}.train() "
                "before training again"),
        "zh": Text(
            title="评估模型时没有调用 model.eval()",
            message="{model} 在关闭梯度（torch.no_grad）的情况下被调用了 {count} 次，这正是评估的做法，但其中的 {modules} "
                    "仍处于训练模式。Dropout 仍在随机丢弃单元，BatchNorm 用每个评估批次自己的统计量做归一化，"
                    "还会用评估数据覆盖它的滑动平均值，所以验证结果噪声大、偏低，而且评估本身就改动了训练好的模型。",
            fix="评估前后切换模式：{name}.eval()  # 在验证循环之前；再次训练前调用 {name}.train()"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.modes = _ModeModules()
        self.calls: weakref.WeakKeyDictionary[nn.Module, int] = weakref.WeakKeyDictionary()
        # Per model, its last no_grad call: (backward count, step, input fingerprint, counted).
        self.last: weakref.WeakKeyDictionary[nn.Module, tuple[Any, ...]] = weakref.WeakKeyDictionary()
        self.trained: weakref.WeakSet[nn.Module] = weakref.WeakSet()
        # Recent top-level outputs (producer, output) and who consumed them: a GAN's generator
        # feeds a discriminator trained by another optimizer, and sampling it under no_grad is not evaluation.
        self.recent: deque[tuple[weakref.ref[nn.Module], weakref.ref[torch.Tensor], int]] = deque(maxlen=4)
        self.consumers: weakref.WeakKeyDictionary[nn.Module, weakref.WeakSet[nn.Module]] = \
            weakref.WeakKeyDictionary()

    @sampled_and_evaluation  # between sampled steps only a call with gradients off can be an evaluation pass
    def on_forward(self, ev: ForwardEvent) -> None:
        model = ev.module
        if self.reported or (not self.session.sampled and (ev.grad_enabled or not model.training)):
            return  # (the usual training call on a step not sampled: decided before anything else)
        if not self.session.has_parameters(model):
            return  # loss modules, metrics
        if self.session.sampled:  # a GAN feeds its discriminator every step: sampled steps see it too
            self._track_feeding(model, ev)
        # model.eval() was called on the root: whatever was switched back on (MC dropout) is deliberate.
        if ev.grad_enabled or not model.training:
            return
        active = [m for m, _ in self.modes.get(model, self.session.step, self.session.sampled) if m.training]
        if not active or not self._is_trained(model):
            return
        if any(isinstance(m, _BatchNorm) and m.momentum is None for m in active):
            return  # BatchNorm statistics being recomputed on purpose (swa_utils.update_bn)
        if not self._evaluation_like(model, ev):
            return
        count = self.calls[model]
        if count >= 2 and not self._feeds_other_optimizer(model):
            kinds = sorted({type(m).__name__ for m in active})
            self.report(ev.where, {"model": type(model).__name__, "no_grad_calls": count,
                                   "modules_in_training_mode": len(active), "module_types": kinds},
                        model=type(model).__name__, count=count, modules=", ".join(kinds),
                        name=user_name(model) or "model")  # the script's own name for it, when found

    def _evaluation_like(self, model: nn.Module, ev: ForwardEvent) -> bool:
        """Whether this no_grad call, with the one before it, looks like evaluation rather than a step's own use.

        Evaluation: several calls with no backward() between them (a validation loop), calls that skip
        training steps (once per epoch), or the same data again (a fixed validation set). A single call on
        fresh data in every training step (pseudo-labels, mined negatives) is part of training. Counts the
        previous call too when this one confirms it."""
        s = self.session
        now = (s.backward_count, s.step, _fingerprint(next(iter(_tensors(ev.inputs)), None)))
        prev, self.last[model] = self.last.get(model), (*now, False)
        if prev is None:
            return False
        same_data = now[2] is not None and now[2] == prev[2]
        if not (now[0] == prev[0] or now[1] - prev[1] >= 2 or same_data):
            return False
        self.calls[model] = self.calls.get(model, 0) + (1 if prev[3] else 2)
        self.last[model] = (*now, True)
        return True

    def _is_trained(self, model: nn.Module) -> bool:
        if model in self.trained:
            return True
        if self.session.is_trained(model):
            self.trained.add(model)
            return True
        return False

    def _track_feeding(self, model: nn.Module, ev: ForwardEvent) -> None:
        """Remember which model's output another model took as input (shared storage, the tensor still alive)."""
        ptrs = {_storage(t) for t in _tensors(ev.inputs)}
        for prod_ref, out_ref, ptr in self.recent:
            producer = prod_ref()
            if producer is not None and producer is not model and out_ref() is not None and ptr in ptrs:
                self.consumers.setdefault(producer, weakref.WeakSet()).add(model)
        for t in _tensors(ev.output)[:1]:
            self.recent.append((weakref.ref(model), weakref.ref(t), _storage(t)))

    def _feeds_other_optimizer(self, model: nn.Module) -> bool:
        """True when the model's output feeds a model that another optimizer trains (a GAN generator)."""
        consumers = list(self.consumers.get(model, ()))
        if not consumers:
            return False
        owned = [{id(p) for g in opt.param_groups for p in g["params"]} for opt in self.session.optimizers]
        mine = {id(p) for p in model.parameters()}
        for other in consumers:
            theirs = {id(p) for p in other.parameters()}
            if any(o & theirs for o in owned) and not any(o & theirs and o & mine for o in owned):
                return True
        return False


_GOOD = ("trained in training mode",)


@register
class TrainModeMissing(Check):
    id = "train-mode-missing"
    loop_only = True
    severity = "warning"
    summary = "a model with Dropout / BatchNorm trained while in eval mode (model.train() missing)"
    text = {
        "en": Text(
            title="Model trained while in eval mode",
            message="{model} was trained for {count} optimizer steps in a row while it was in eval mode "
                    "(model.eval() was called, probably for validation, and model.train() never came back). "
                    "Its {modules} behave as at test time: Dropout does nothing, so there is no regularization, "
                    "and BatchNorm uses frozen running statistics instead of the batch's, so it stops adapting and "
                    "training can go worse than it should.",
            fix="switch back at the start of every training epoch: {name}.train()  # before the training loop; "
                "{name}.eval() only around validation"),
        "zh": Text(
            title="模型在 eval 模式下被训练",
            message="{model} 连续 {count} 个优化步都是在 eval 模式下训练的（调用过 model.eval()，多半是为了验证，"
                    "之后没有再调用 model.train()）。其中的 {modules} 表现得像测试时一样：Dropout 不起作用，失去了正则化；"
                    "BatchNorm 使用冻结的滑动统计量而不是当前批次的统计量，不再随训练调整，训练效果会变差。",
            fix="每个训练 epoch 开始时切回训练模式：{name}.train()  # 放在训练循环之前；只在验证前后用 {name}.eval()"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.modes = _ModeModules()
        # Per model once seen in a bad state, the verdict of its last grad-enabled forward since the last
        # step: _GOOD (training mode), or (where, modules in eval mode, their trained params); None = used up.
        self.pending: weakref.WeakKeyDictionary[nn.Module, Any] = weakref.WeakKeyDictionary()
        self.watching = False  # some model was once seen in a bad state (pending has entries: no lookups before)
        self.streak: weakref.WeakKeyDictionary[nn.Module, int] = weakref.WeakKeyDictionary()
        self._owned: tuple[int, set[int]] = (-1, set())

    @sampled_and_next  # a model left in eval mode stays so for many steps: the windows' steps show it
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.reported or not ev.grad_enabled:
            return
        model = ev.module
        if model.training:  # the usual case: costs two attribute reads
            if self.watching and model in self.pending:
                self.pending[model] = _GOOD
            return
        owned = self._owned_params()
        if not owned:
            return  # no optimizer has stepped yet
        bad: list[nn.Module] = []
        params: set[int] = set()
        for m, parent in self.modes.get(model, self.session.step, self.session.sampled):
            if m.training:
                continue
            live = self._live_params(m, parent, owned)
            if live:  # not frozen on purpose: its block is being trained
                bad.append(m)
                params |= live
        if bad:
            self.pending[model] = (ev.where, bad, params)
            self.watching = True
        elif model in self.pending:
            self.pending[model] = _GOOD

    @sampled_and_next
    def on_step(self, ev: StepEvent) -> None:
        if self.reported or not self.watching:
            return
        opt_ids = {id(p) for g in ev.optimizer.param_groups for p in g["params"]}
        for model in list(self.pending.keys()):
            state = self.pending[model]
            if state is None:
                continue  # no new forward since the last step (another optimizer of the same model)
            if state is _GOOD:
                if any(id(p) in opt_ids for p in model.parameters()):
                    self.streak[model] = 0
                    self.pending[model] = None
                continue
            where, bad, params = state
            if not params & opt_ids:
                continue  # this optimizer does not update the part in the wrong mode
            self.pending[model] = None  # one forward counts for one step
            self.streak[model] = count = self.streak.get(model, 0) + 1
            if count >= 3:
                kinds = sorted({type(m).__name__ for m in bad})
                self.report(where, {"model": type(model).__name__, "steps_in_eval_mode": count,
                                    "modules_in_eval_mode": len(bad), "module_types": kinds},
                            model=type(model).__name__, count=count, modules=", ".join(kinds),
                            name=user_name(model) or "model")
                return

    def _owned_params(self) -> set[int]:
        """ids of the parameters the optimizers own, re-read once per step."""
        if self._owned[0] != self.session.step:
            self._owned = (self.session.step, self.session.trained_params())
        return self._owned[1]

    @staticmethod
    def _live_params(m: nn.Module, parent: nn.Module, owned: set[int]) -> set[int]:
        """Trained parameters of the block around ``m``; empty when the block is frozen on purpose.

        A BatchNorm whose own affine parameters are frozen counts as frozen even inside a trained block
        (a frozen backbone in a custom class that also holds the trained head)."""
        own = list(m.parameters(recurse=False))
        if own and not any(p.requires_grad and id(p) in owned for p in own):
            return set()
        return {id(p) for p in parent.parameters() if p.requires_grad and id(p) in owned}
