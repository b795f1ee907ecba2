"""graph-retained: losses or model outputs kept alive with their autograd graph across steps.

``history.append(loss)``, ``total_loss += loss`` or ``preds.append(out)`` keep every step's
autograd graph alive, so memory grows step after step. Judged from object lifetimes: a tiny
probe object is put in the ``metadata`` dict of the graph node (``grad_fn``) of each loss
backward() is called on and of each model output; the probe lives exactly as long as that
node, so a weak reference to it tells whether the graph is still held, even when only a
running sum (not the loss tensor itself) holds it.

The same kind of probe catches an evaluation pass run with gradients on whose results are kept
(``val_loss += criterion(model(x), y)`` without ``torch.no_grad()``): eight or more model calls
between two backward() calls whose graphs no backward() went through (a hook on each graph node
says so) and that are still alive two backward() calls and two optimizer steps after the run
ended. Many calls before one backward() on purpose (an RNN cell unrolled by hand, a REINFORCE
episode) do not count: that backward() went through them and freed what their graphs held; a
line whose runs are always gone through that way is probed no more. Needs eight or more
evaluation batches: a full-batch evaluation is left to the rule across steps.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_and_next, sampled_and_repeated_calls
from trainwell.doctor.events import BackwardEvent, ForwardEvent, StepEvent
from trainwell.doctor.lang import pick

_KEY = "trainwell.graph_retained"
_RUN_KEY = _KEY + ".run"


class _Probe:
    """Lives in a graph node's metadata; a weak reference to it dies with the node."""

    __slots__ = ("__weakref__",)


class _RunProbe:
    """The same, for a model call between two backward() calls; ``used`` once a backward() went through it."""

    __slots__ = ("__weakref__", "used")

    def __init__(self) -> None:
        self.used = False

    def mark(self, grad_outputs: Any) -> None:
        self.used = True


def _unprobed_metadata(t: torch.Tensor, key: str) -> dict[str, Any] | None:
    """The ``metadata`` dict of ``t``'s graph node, or None: no graph, a node kind without metadata, or already
    probed under ``key`` (the same output seen twice; a loss module's output is also the loss)."""
    try:
        meta = t.grad_fn.metadata  # type: ignore[union-attr]
    except (AttributeError, RuntimeError):
        return None
    return None if key in meta else meta


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
    summary = ("losses or outputs are kept with their autograd graph across steps, or an evaluation pass run with "
               "gradients on keeps its outputs' graphs, so memory grows")
    text = {
        "en": Text(
            title="Losses or model outputs are kept alive with their autograd graph",
            message="{story} A tensor that still has its grad_fn keeps its whole graph in memory, so storing it "
                    "(history.append(loss), total_loss += loss, preds.append(output), a validation loss summed "
                    "without torch.no_grad()) holds that memory and adds to it with every batch or step kept, "
                    "until training slows down or runs out of memory.",
            fix="store plain numbers or detached tensors: history.append(loss.item())  # or output.detach(); "
                "evaluate under `with torch.no_grad():`"),
        "zh": Text(
            title="损失或模型输出连同计算图一起被保留了下来",
            message="{story}仍带有 grad_fn 的张量会让整张计算图留在内存里，所以把它存起来（history.append(loss)、"
                    "total_loss += loss、preds.append(output)、没有 torch.no_grad() 时把验证损失累加成张量）"
                    "会一直占用这些内存，并且每多保存一个批次或一步就多占一份，直到训练变慢或内存耗尽。",
            fix="只保存数值或 detach 之后的张量：history.append(loss.item())  # 或 output.detach()；"
                "评估时放在 `with torch.no_grad():` 里"),
    }
    AGE = 2  # only graphs from at least this many steps ago count
    MIN_STEPS = 8  # old steps with a live graph before reporting
    CAP = 512  # probes tracked at most
    RUN_MIN = 8  # probed model calls of one run, never gone through by a backward() and still alive...
    # ...two backward() calls and AGE optimizer steps after the run ended (not another optimizer of one iteration)
    RUN_CAP = 64  # probes kept per run
    CLEAN = 3  # runs from one line whose every probe a backward() went through: that line is probed no more

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.probes: list[tuple[int, weakref.ref[_Probe], str]] = []  # (step, probe, kind)
        self.wheres: dict[str, str | None] = {}  # kind -> the line of its first probe
        self.prev = 0
        # Model calls with gradients on since the last backward() (a "run"): the first is a training step's own,
        # the later ones are probed. A run whose probes a backward() did not go through waits in ``ended``.
        self.run_calls = 0
        self.run: list[weakref.ref[_RunProbe]] = []
        self.run_where: str | None = None  # the line of the run's second call
        self.run_probed = False  # whether this run's calls are probed (not from a line found clean)
        # (optimizer step and backward() count when it ended, its unused probes, whether it had more calls than
        # RUN_CAP, its line)
        self.ended: list[tuple[int, int, list[weakref.ref[_RunProbe]], bool, str | None]] = []
        self.clean: dict[str | None, int] = {}  # line -> runs from it that a backward() went through entirely

    def _skip(self) -> bool:
        """Whether this call's graph goes unprobed: the steps of a window (a sampled step and the one after it)
        are probed, which is enough to see a pile grow; a repeated call between windows is probed for its run only."""
        return not self.session.in_window or self.reported or len(self.probes) >= self.CAP

    def _track(self, t: torch.Tensor, kind: str, ev: BackwardEvent | ForwardEvent) -> None:
        meta = _unprobed_metadata(t, _KEY)
        if meta is None:
            return
        probe = _Probe()
        meta[_KEY] = probe
        if kind not in self.wheres:  # finding the line walks the stack: once per kind
            self.wheres[kind] = ev.where
        self.probes.append((self.session.step, weakref.ref(probe), kind))

    @sampled_and_repeated_calls  # in windows, and the backward() that ends a run of several model calls
    def on_backward(self, ev: BackwardEvent) -> None:
        if not self._skip() and ev.tensor.numel() == 1:
            self._track(ev.tensor, "losses", ev)
        if self.run:
            self._end_run()
        self.run_calls = 0

    def _end_run(self) -> None:
        """A backward() ended the run (and has already gone through whatever graphs it used)."""
        run, self.run = self.run, []
        unused = [r for r in run if (p := r()) is not None and not p.used]
        if len(unused) >= self.RUN_MIN:
            if len(self.ended) < 4 and not self.reported:
                full = len(run) >= self.RUN_CAP
                self.ended.append((self.session.step, self.session.backward_count, unused, full, self.run_where))
        elif not unused:  # many calls for one backward() on purpose (an RNN cell unrolled by hand): probed no more
            self.clean[self.run_where] = self.clean.get(self.run_where, 0) + 1

    @sampled_and_repeated_calls  # in windows, and a second or later model call before backward() between them
    def on_forward(self, ev: ForwardEvent) -> None:
        if not ev.grad_enabled:
            return
        probe_run = False
        if not self.reported and self.session.has_parameters(ev.module):  # a model, not a loss module
            self.run_calls = self.session.calls_since_backward  # (the session counts every call, this one included)
            if self.run_calls == 2:  # (finding the line walks the stack: once per run, not per call)
                self.run_where = ev.where
                # (Past 64 lines found clean, new lines are not probed either: a bound on the table, never met
                # by the scripts tried.)
                self.run_probed = len(self.clean) < 64 and self.clean.get(self.run_where, 0) < self.CLEAN
            probe_run = self.run_calls > 1 and self.run_probed and len(self.run) < self.RUN_CAP
        track = not self._skip()
        if probe_run or track:
            t = _first_graph_tensor(ev.output)  # (looked for once, for both probes)
            if t is not None:
                if probe_run:
                    self._probe_run(t)
                if track:
                    self._track(t, "model outputs", ev)

    def _probe_run(self, t: torch.Tensor) -> None:
        """The output of a second or later model call before backward(): its own probe (apart from the step's)."""
        meta = _unprobed_metadata(t, _RUN_KEY)
        if meta is None:
            return
        probe = _RunProbe()
        try:
            t.grad_fn.register_prehook(probe.mark)  # type: ignore[union-attr]
        except (AttributeError, RuntimeError):
            return  # a node kind without hooks: not watched
        meta[_RUN_KEY] = probe
        self.run.append(weakref.ref(probe))

    def _judge_runs(self) -> None:
        """Runs that ended long enough ago (AGE optimizer steps and two backward() calls: other optimizers'
        steps in the same iteration do not count as later): their unused graphs still alive are a pile kept by
        mistake, since a backward() would have freed what they hold."""
        s = self.session
        while self.ended and self.ended[0][0] <= s.step - self.AGE and self.ended[0][1] <= s.backward_count - 2:
            ended_at, _, probes, full, where = self.ended.pop(0)
            alive = sum(1 for p in [r() for r in probes] if p is not None and not p.used)
            if alive < self.RUN_MIN:
                continue
            steps = s.step + 1 - ended_at  # optimizer steps since the run ended, this one included
            lang = s.lang
            count = pick(lang, f"at least {alive}", f"至少 {alive}") if full else str(alive)
            self.report(where, {"calls_without_backward_alive": alive, "calls_probed": len(probes),
                                "optimizer_steps_since": steps, "kept": "model calls without backward"},
                        count=alive, story=pick(
                            lang, f"The autograd graphs of {count} model calls made with gradients on and never "
                                  f"gone through by a backward() (an evaluation pass or a rollout without "
                                  f"torch.no_grad(), most likely) are still alive {steps} optimizer steps later.",
                            f"{count} 次在开启梯度时调用模型、却从未经过 backward() 的计算图（很可能是没有 "
                            f"torch.no_grad() 的验证、评估或采样过程）在 {steps} 个优化步骤之后仍然存活。"))
            self.ended.clear()
            return

    @sampled_and_next
    def on_step(self, ev: StepEvent) -> None:
        step = self.session.step
        if self.ended and not self.reported:
            self._judge_runs()
        if self.reported or not self.session.sampled:  # looked at once a window
            return
        self.probes = [p for p in self.probes if p[1]() is not None]
        old = [p for p in self.probes if p[0] <= step - self.AGE]
        n = len({p[0] for p in old})
        # Ordinary code keeps the last one or two alive; a growing pile from many old steps is a leak.
        if n >= self.MIN_STEPS and n > self.prev > 0:
            losses = [p for p in old if p[2] == "losses"]
            first = (losses or old)[0]
            lang = self.session.lang
            self.report(self.wheres.get(first[2]), {"old_steps_with_live_graph": n, "previous_look": self.prev,
                                   "live_graphs": len(old), "kept": first[2]}, count=n, story=pick(
                lang, f"The autograd graphs of losses or model outputs from {n} earlier steps are still alive, and "
                      f"the number grows every step.",
                f"来自之前 {n} 个步骤的损失或模型输出的计算图仍然存活，而且每一步都在增加。"))
            self.probes.clear()
        self.prev = n
