"""graph-retained: losses or model outputs kept alive with their autograd graph across steps.

``history.append(loss)``, ``total_loss += loss`` or ``preds.append(out)`` keep every step's
autograd graph alive, so memory grows step after step. Judged from object lifetimes: a tiny
probe object is put in the ``metadata`` dict of the graph node (``grad_fn``) of each loss
backward() is called on and of each model output; the probe lives exactly as long as that
node, so a weak reference to it tells whether the graph is still held, even when only a
running sum (not the loss tensor itself) holds it.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register
from trainwell.doctor.events import BackwardEvent, ForwardEvent, StepEvent

_KEY = "trainwell.graph_retained"


class _Probe:
    """Lives in a graph node's metadata; a weak reference to it dies with the node."""

    __slots__ = ("__weakref__",)


def _first_graph_tensor(output: Any, depth: int = 0) -> torch.Tensor | None:
    if isinstance(output, torch.Tensor):
        return output if output.grad_fn is not None else None
    if depth < 2 and isinstance(output, (list, tuple)):
        items: Any = output
    elif depth < 2 and isinstance(output, Mapping):
        items = output.values()
    else:
        return None
    for item in list(items)[:8]:
        t = _first_graph_tensor(item, depth + 1)
        if t is not None:
            return t
    return None


@register
class GraphRetained(Check):
    id = "graph-retained"
    loop_only = True
    severity = "warning"
    summary = "losses or outputs are kept with their autograd graph across steps, so memory grows"
    text = {
        "en": Text(
            title="Losses or outputs from old steps are kept with their autograd graph",
            message="The autograd graphs of losses or model outputs from {count} earlier steps are still alive, "
                    "and the number grows every step. A tensor that still has its grad_fn keeps its whole graph in "
                    "memory, so storing it (history.append(loss), total_loss += loss, preds.append(output)) makes "
                    "memory grow until training slows down or runs out of memory.",
            fix="store plain numbers or detached tensors: history.append(loss.item())  # or output.detach()"),
        "zh": Text(
            title="旧步骤的损失或输出连同计算图一起被保留了下来",
            message="来自之前 {count} 个步骤的损失或模型输出的计算图仍然存活，而且每一步都在增加。仍带有 grad_fn 的张量会让"
                    "整张计算图留在内存里，所以把它存起来（history.append(loss)、total_loss += loss、"
                    "preds.append(output)）会让内存不断增长，直到训练变慢或内存耗尽。",
            fix="只保存数值或 detach 之后的张量：history.append(loss.item())  # 或 output.detach()"),
    }
    EVERY = 4  # look every few optimizer steps...
    EVERY_LATER = 16  # ...and fewer after LATER steps (a pile that grows by one graph a step shows either way)
    LATER = 500
    AGE = 2  # only graphs from at least this many steps ago count
    MIN_STEPS = 8  # old steps with a live graph before reporting
    CAP = 512  # probes tracked at most
    DENSE = 64  # every step is probed up to here

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.probes: list[tuple[int, weakref.ref[_Probe], str]] = []  # (step, probe, kind)
        self.wheres: dict[str, str | None] = {}  # kind -> the line of its first probe
        self.prev = 0

    def _skip(self) -> bool:
        step = self.session.step
        # After the first steps, one step in EVERY is enough to see a pile grow.
        return ((step % self.EVERY != 0 and step >= self.DENSE) or (step % self.EVERY_LATER != 0 and step >= self.LATER)
                or self.reported or len(self.probes) >= self.CAP)

    def _track(self, t: torch.Tensor, kind: str, ev: BackwardEvent | ForwardEvent) -> None:
        if t.grad_fn is None:
            return
        try:
            meta = t.grad_fn.metadata
        except (AttributeError, RuntimeError):
            return  # a node kind without metadata: not watched
        if _KEY in meta:
            return  # already probed (a loss module's output is also the loss)
        probe = _Probe()
        meta[_KEY] = probe
        if kind not in self.wheres:  # finding the line walks the stack: once per kind
            self.wheres[kind] = ev.where
        self.probes.append((self.session.step, weakref.ref(probe), kind))

    def on_backward(self, ev: BackwardEvent) -> None:
        if not self._skip() and ev.tensor.numel() == 1:
            self._track(ev.tensor, "losses", ev)

    def on_forward(self, ev: ForwardEvent) -> None:
        if ev.grad_enabled and not self._skip():
            t = _first_graph_tensor(ev.output)
            if t is not None:
                self._track(t, "model outputs", ev)

    def on_step(self, ev: StepEvent) -> None:
        step = self.session.step
        if self.reported or step % (self.EVERY if step < self.LATER else self.EVERY_LATER):
            return
        self.probes = [p for p in self.probes if p[1]() is not None]
        old = [p for p in self.probes if p[0] <= step - self.AGE]
        n = len({p[0] for p in old})
        # Ordinary code keeps the last one or two alive; a growing pile from many old steps is a leak.
        if n >= self.MIN_STEPS and n > self.prev > 0:
            losses = [p for p in old if p[2] == "losses"]
            first = (losses or old)[0]
            self.report(self.wheres.get(first[2]), {"old_steps_with_live_graph": n, "previous_look": self.prev,
                                   "live_graphs": len(old), "kept": first[2]}, count=n)
            self.probes.clear()
        self.prev = n
