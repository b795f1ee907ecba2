"""The doctor's session: installs PyTorch's global hooks, turns what they see into events,
hands the events to every check, and collects the findings.

Hooks used: global module forward (pre-)hooks, global optimizer step (pre-)hooks, and thin
wrappers around the loss functions in ``torch.nn.functional``, ``Tensor.backward``,
``zero_grad`` and the DataLoader iterator. Nothing in the user's code is edited.
"""

from __future__ import annotations

import math
import re
import sys
import time
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.modules import module as module_hooks
from torch.nn.modules.loss import _Loss
from torch.optim import optimizer as optimizer_hooks
from torch.utils.data import dataloader as dataloader_module

from trainwell.doctor.check import (CHECKS, Check, acts_after_sampled, acts_every_step, acts_in_evaluation,
                                    acts_on_first_batch, acts_on_first_step, acts_on_repeated_calls)
from trainwell.doctor.events import (BackwardEvent, BatchEvent, FedCall, ForwardEvent, LossEvent, StepEvent,
                                     ZeroGradEvent)
from trainwell.doctor.findings import SEVERITY_ORDER, Finding
from trainwell.doctor.loaded import Loaded
from trainwell.doctor.warnsite import past_wrappers, skipped, stand_in
from trainwell.doctor.where import where

LOSS_FUNCTIONS = ("cross_entropy", "nll_loss", "binary_cross_entropy_with_logits", "binary_cross_entropy",
                  "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div")


def _safe(method: Callable[..., Any]) -> Callable[..., Any]:
    """A hook body that can never raise into the user's code: a failure is recorded instead."""

    def guarded(self: Session, *args: Any) -> Any:
        if _dynamo_compiling() or _compiler._is_compiling_flag:  # _compiling(), inlined: every hook runs this
            return None  # torch.compile is tracing the model: stay out of its graph (it runs the hooks itself)
        try:
            return method(self, *args)
        except Exception as e:  # noqa: BLE001
            self._hook_failed(method.__name__, e)
            return None

    guarded.__name__ = method.__name__
    return guarded


def _compiling() -> bool:
    """Whether torch.compile (or torch.export) is tracing: Dynamo folds ``is_dynamo_compiling()`` to True while
    it traces; an export outside Dynamo sets the compiler's flag. One call in eager mode, where hooks run every
    step (``torch.compiler.is_compiling()`` costs two)."""
    return _dynamo_compiling() or _compiler._is_compiling_flag


_dynamo_compiling = torch.compiler.is_dynamo_compiling
_grad_enabled = torch.is_grad_enabled
_tracing = torch._C._get_tracing_state  # torch.jit.trace is running (None, else its state): one C call
_compiler = torch.compiler
_getframe = sys._getframe  # events are given the frame of their call: ``where`` is found from it only if asked
# torch.compile warns about global hooks on every compiled module; the hooks are the doctor's, not the user's.
_COMPILE_WARNING = "Using `torch.compile(module)` when there are global hooks"


_STRIDED = torch.strided
_Tensor = torch.Tensor
FED_BYTES = 16 * 2**20  # inputs of model calls kept between windows for ``on_fed`` (more: handed over at once)


def _nothing() -> None:
    """A dead weak reference's stand-in: it refers to nothing."""


def _sampling_every(s: int) -> int:
    """The spacing of sampled steps around step ``s`` (``Session.sampled_at``)."""
    return 1 if s < 10 else 10 if s < 100 else 25 if s < 250 else 50 if s < 500 else 100 if s < 1000 else 200


def unjudgeable(x: Any, depth: int = 0) -> str | None:
    """The kind of tensor in ``x`` (a tensor, or a tuple, list or dict of them, two levels deep, 16 items each) that
    the checks cannot judge: ``"nested"``, ``"complex"`` or a sparse layout's name (``"sparse_coo"``,
    ``"sparse_csr"`` ...); None when there is none. The checks' tensor work (reshape, statistics, rows hashed)
    assumes dense real tensors: on these it would raise or mislead."""
    if isinstance(x, _Tensor):
        if x.layout is not _STRIDED or x.is_nested or x.dtype.is_complex:  # (one test for the usual tensor)
            return _kind(x)
        return None
    if depth < 2:
        t = type(x)
        items = (x if len(x) <= 16 else x[:16]) if t is tuple or t is list else \
            list(x.values())[:16] if t is dict else ()
        for v in items:
            if isinstance(v, _Tensor):
                if v.layout is not _STRIDED or v.is_nested or v.dtype.is_complex:
                    return _kind(v)
            elif (kind := unjudgeable(v, depth + 1)) is not None:
                return kind
    return None


def _kind(x: torch.Tensor) -> str:
    if x.is_nested:
        return "nested"
    return "complex" if x.layout is _STRIDED else str(x.layout).removeprefix("torch.")


def _event_unjudgeable(ev: Any) -> str | None:
    """``unjudgeable`` of the tensors an event carries (its leaf calls are filtered where they are gathered). Runs
    on every dispatched event: a field that is a tensor is tested here, without a call."""
    t = type(ev)
    if t is ForwardEvent:
        fields: tuple[Any, ...] = (ev.inputs, ev.output)
    elif t is LossEvent:
        fields = (ev.input, ev.target)
    elif t is BackwardEvent:
        fields = (ev.tensor,)
    elif t is BatchEvent:
        fields = (ev.batch,)
    else:
        return None
    for x in fields:
        if isinstance(x, _Tensor):  # (the usual field, tested without a call)
            if x.layout is not _STRIDED or x.is_nested or x.dtype.is_complex:
                return _kind(x)
        elif x is not None and (kind := unjudgeable(x)) is not None:
            return kind
    return None


# (A batch is handed over as it came: its handlers read the loader and time, and test what they fingerprint.)
_TENSOR_EVENTS = frozenset((ForwardEvent, LossEvent, BackwardEvent))


def _restore_warning_filters(saved: list[Any]) -> None:
    warnings.filters[:] = saved
    mutated = getattr(warnings, "_filters_mutated", None) or getattr(warnings, "_filters_mutated_lock_held", None)
    if mutated is not None:
        try:
            mutated()  # let cached "already warned" decisions see the restored filters
        except Exception:  # noqa: BLE001 - only a cache refresh
            pass


def _where() -> str | None:
    try:
        return where()
    except Exception:  # noqa: BLE001 - the location is a nicety, never a reason to fail
        return None


def read_back(values: list[torch.Tensor]) -> list[Any]:
    """Scalar tensors as Python numbers: one wait for tensors all on one device (the usual), else one each."""
    if not values:
        return []
    if len({v.device for v in values}) == 1:
        return torch.stack(list(values)).tolist()
    return [v.item() for v in values]


class _Guard:
    """Re-entrancy flag: the doctor's own tensor work must not produce events."""

    def __init__(self) -> None:
        self.active = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        prev, self.active = self.active, True
        try:
            yield
        finally:
            self.active = prev


class Session:
    """Watches PyTorch while it is installed (``with session:``) and runs the checks on what it sees."""

    def __init__(self, *, lang: str = "en", checks: list[str] | None = None,
                 on_finding: Callable[[Finding], None] | None = None,
                 on_internal_error: Callable[[str | None, str, str], None] | None = None, debug: bool = False,
                 in_trainer: bool = False) -> None:
        self.lang = lang
        self.debug = debug
        self.in_trainer = in_trainer  # inside trainwell's own loop (``fit`` / ``trainwell train``), not ``doctor run``
        self.on_finding = on_finding
        self.on_internal_error = on_internal_error  # (check id or None for a hook, handler, "Type: message")
        self.findings: list[Finding] = []
        self.reported_ids: set[str] = _ReportedIds(self)  # adding an id sets that check's ``reported``
        self.internal_errors: list[str] = []  # the doctor's own failures, one per check or hook
        self._failed: set[str] = set()
        self.quiet = _Guard()
        from trainwell.doctor import checks as _builtin  # noqa: F401  (registers the built-in checks)

        names = checks if checks is not None else CHECKS.names()
        self.checks: list[Check] = [CHECKS.get(n)(self) for n in names]
        # Per event, only the checks that handle it: most checks handle one or two events.
        # Per event, the bound handlers of the checks that handle it (most checks handle one or two
        # events), and the subset that acts on steps that are not sampled.
        self._handlers: dict[str, list[tuple[Check, Callable[..., None]]]] = {
            m: [(c, getattr(c, m)) for c in self.checks if getattr(type(c), m) is not getattr(Check, m)]
            for m in dir(Check) if m.startswith("on_")}
        self._every_step = {m: [(c, h) for c, h in hs if acts_every_step(type(c), m)]
                            for m, hs in self._handlers.items()}
        self._after_sampled = {m: [(c, h) for c, h in hs if acts_after_sampled(type(c), m)]  # the step after one
                               for m, hs in self._handlers.items()}
        # The same two for calls made with gradients off (on_forward, on_loss): with ``@sampled_and_evaluation``.
        self._every_step_off = {m: [(c, h) for c, h in hs if acts_in_evaluation(type(c), m)]
                                for m, hs in self._handlers.items()}
        self._after_sampled_off = {m: [(c, h) for c, h in hs if acts_after_sampled(type(c), m)
                                       or acts_in_evaluation(type(c), m)] for m, hs in self._handlers.items()}
        # Windowed handlers that also act between windows on a repeated model call before backward() (and on the
        # backward() that ends such a run), or on an optimizer's first step: the session's own counters say when.
        self._repeated = {m: [(c, h) for c, h in hs if acts_on_repeated_calls(type(c), m)]
                          for m, hs in self._handlers.items()}
        self._first_step = {m: [(c, h) for c, h in hs if acts_on_first_step(type(c), m)]
                            for m, hs in self._handlers.items()}
        self._first_batch = [(c, h) for c, h in self._handlers["on_batch"] if acts_on_first_batch(type(c), "on_batch")]
        # Between windows, model calls with gradients on are recorded, not dispatched: (call, versions of its
        # tensor inputs), handed to the ``on_fed`` handlers when the next window opens.
        self._fed_readers = self._handlers["on_fed"]
        # (module, inputs, batch, the version of its one tensor input or a list of its tensor inputs' versions)
        self._fed: list[tuple[nn.Module, tuple[Any, ...], int | None, Any]] = []
        self._fed_bytes = 0
        self._fed_at_once = False  # an input was changed in place after its call: from now on hand over each call
        # After a hand-over no check needed: id(model) -> (weak reference, whether every reader can go without its
        # calls that a finite loss vouches for, ``Check.skips_fed``); None: every call is recorded.
        self._fed_skips: dict[int, tuple[Any, bool]] | None = None
        # The DataLoader iterator of the latest batch and its dataset's id for ``batch_dataset`` (weak reference, id).
        self._iterator: tuple[Any, int] = (_nothing, 0)
        self._relaxed: set[tuple[int, str]] = set()  # (id(check), handler) taken off the every-step table
        self.sampled = True  # whether expensive checks look at this step (``sampled_at(step)``, set as it ends)
        # The table for this step: _handlers on sampled steps, _after_sampled on the step after one, else _every_step;
        # _active_off the one for calls with gradients off.
        self._active = self._active_off = self._handlers
        # A window (a sampled step and the step after it) has every wrapper in place; between windows only those
        # whose event still has an every-step handler, or, where only evaluation calls have one, the wrapper's
        # evaluation-only form (``_set_window``). event -> [(owner, name, original, wrapper, evaluation-only form)]
        self._window = True
        self._switched: dict[str, list[tuple[Any, str, Any, Any, Any]]] = {}
        # trainwell's loop (``loop_reports``): the switch that turns its step reports on and off, the id of the dataset
        # its training batches come from, whether it reports now, and the wrappers its reports stand in for.
        self._loop: Callable[[bool], None] | None = None
        self._loop_dataset = 0
        self._by_loop = False
        self._loop_patches: list[tuple[Any, str, Any, Any]] = []
        self._step_pre_hook: Any = None  # the handle of the optimizer step pre-hook while it is on
        # id of the optimizer whose steps between windows only count (nothing acts on them, it is the one that
        # stepped before, and it is no new optimizer's first step), else 0. Set by the step post-hook between
        # windows; cleared as a window opens, when an optimizer is made (no other can take a freed one's id
        # unnoticed) and when a handler is put on the every-step table.
        self._coasting = 0
        self._evaluating = False  # trainwell's loop is evaluating (``evaluating``)
        # Optimizers made since the session began that have not stepped yet: between windows the step pre-hook is
        # on only while there is one (a handler acts on each optimizer's first step, ``sampled_and_first_step``).
        self._fresh: weakref.WeakSet[torch.optim.Optimizer] = weakref.WeakSet()
        self._next_window = 0  # the next step that is sampled (``sampled_at``): steps before it take the short path
        # Called with the optimizer just before a sampled step (its gradients final), unseen by the checks: the
        # gradient norms trainwell's report plots are read there, with no call on the other steps.
        self.before_sampled_step: Callable[[torch.optim.Optimizer], None] | None = None
        # What the run looks like so far.
        self.step = 0  # optimizer steps taken (any optimizer)
        self.step_offset = 0  # steps taken before this session began (a resumed run): findings count from there
        self.backward_count = 0
        self.nonfinite_data = False  # a batch with NaN / inf inputs went by (maybe on a step not sampled)
        self.batches = 0  # batches a DataLoader gave so far
        self.batch_dataset: int | None = None  # id of the dataset of the latest of them (its loader's, if none)
        # Cheap records of every top-level model call (kept by the session, so that no check needs an event on
        # every step for them):
        self.call_batch: int | None = None  # ``batch_dataset`` if a batch was fetched since the call before, else None
        self._call_batches = 0  # ``batches`` at the last model call
        self._last_shapes: tuple[Any, Any] | None = None  # (input shape, output shape) of the last one: see last_forward
        self.calls_since_backward = 0  # model calls with gradients on since the last backward() began
        self.shared_backwards = 0  # backward() passes that came after more than one such call (or after none)
        # The optimizer stepping now, the steps it took in a row, and the steps in a row of the one before it.
        self._stepping: weakref.ref[torch.optim.Optimizer] | None = None
        self.steps_in_a_row = 0  # of the optimizer stepping now, before this step
        self.previous_optimizer_steps = 0
        self._first_step_now = False  # the optimizer stepping now steps for the first time
        self._losses: list[float] = []  # see ``losses``
        self._pending_losses: list[torch.Tensor] = []  # losses not read back from the device yet
        self.loss_steps: list[int] = []  # the step of each loss in ``losses``
        self.models: weakref.WeakSet[nn.Module] = weakref.WeakSet()  # top-level modules seen in forward
        self.optimizers: weakref.WeakSet[torch.optim.Optimizer] = weakref.WeakSet()
        self.optimizer_count = 0  # optimizers that have stepped so far (one freed since still counts; no WeakSet len())
        self._known_optimizers: dict[int, weakref.ref[torch.optim.Optimizer]] = {}  # id -> ref: no add every step
        # Events no check was given, by the kind of tensor they carried (sparse, nested, complex: see ``unjudgeable``).
        self.unjudged: dict[str, int] = {}
        self._stack: list[nn.Module] = []
        self._leaves: list[tuple[nn.Module, Any, Any]] | None = None
        self._relus: list[Any] | None = None  # outputs of functional relu calls inside a sampled forward
        # F.relu / torch.relu and their watched versions, swapped in on sampled steps (made once, not per toggle).
        self._relu_functions = {(F, "relu"): (F.relu, self._wrap_relu(F.relu)),
                                (torch, "relu"): (torch.relu, self._wrap_relu(torch.relu))}
        self._undo: list[Callable[[], None]] = []
        self._has_params: dict[int, tuple[weakref.ref[nn.Module], bool]] = {}  # id(module) -> (module, answer)
        self._trained: tuple[tuple[int, int], frozenset[int]] = ((-1, -1), frozenset())  # see trained_params
        self._global_hooks: list[Any] = []  # handles of the global forward hooks while they are on
        # Once the script calls torch.compile, the global hooks and F.relu's stand-in stay in place for the rest of
        # the run: compiled code guards on them, and each toggle would recompile it (see ``pin_hooks``).
        self._hooks_pinned = False
        self._model_hooks: dict[int, list[Any]] = {}  # id(model) -> handles of its own forward hooks
        # Whether one watched model runs inside another's forward (seen in a window, or one holds the other): then
        # each watched model gets a forward pre-hook too, which keeps the stack that tells an outer call from an
        # inner one. Without nesting every call a model's own hook sees is a top-level call, and one hook will do.
        self._nesting = False
        self._caller_reports: dict[int, weakref.ref[nn.Module]] = {}  # models whose calls their loop reports
        self._installed = False
        self.cross_rank = False  # one process of a multi-process `doctor run`: checks keep facts to compare ranks
        self.loaded = Loaded()  # models that start from weights made elsewhere (``load_state_dict`` before training)

    # ------------------------------------------------------------------ API for checks

    @staticmethod
    def sampled_at(s: int) -> bool:
        """Whether expensive checks look at step ``s``: the first 10, then 1 in 10 up to step 100, 1 in 25
        up to 250, 1 in 50 up to 500, 1 in 100 up to 1,000 and 1 in 200 after that (45 of 3,000 steps)."""
        return s % _sampling_every(s) == 0

    @staticmethod
    def next_sampled(s: int) -> int:
        """The first step after ``s`` that ``sampled_at`` samples."""
        every = _sampling_every(s + 1)
        # (10, 100, 250, 500 and 1,000, where the spacing changes, are sampled either way)
        return -(-(s + 1) // every) * every

    @property
    def in_window(self) -> bool:
        """Whether this step is in a window (a sampled step or the one after it), when every wrapper is in place."""
        return self._window

    @property
    def last_forward(self) -> tuple[int, tuple[int, ...]] | None:
        """(batch in, output shape) of the last top-level model call given a tensor that returned one, neither of
        them a scalar (None before any)."""
        shapes = self._last_shapes
        return (shapes[0][0], shapes[1]) if shapes is not None else None

    @property
    def losses(self) -> list[float]:
        """The value of each scalar loss that backward() was called on. They are read back from the device
        together, when this is read: read it on sampled steps only, so that other steps never wait."""
        if self._pending_losses:
            pending, self._pending_losses = self._pending_losses, []
            self._losses += read_back(pending)  # one wait for all of them
        return self._losses

    def has_parameters(self, module: nn.Module) -> bool:
        """Whether ``module`` holds parameters (a model, not a loss module or metric); remembered per module."""
        # Keyed by id, not a WeakKeyDictionary: this runs several times a step, and a WeakKeyDictionary
        # lookup makes a weak reference each time. The reference held tells a reused id from the module.
        known = self._has_params.get(id(module))
        if known is not None and known[0]() is module:
            return known[1]
        answer = next(module.parameters(), None) is not None
        if len(self._has_params) >= 1024:  # modules made anew every step (a loss module): forget the dead ones
            self._has_params = {k: v for k, v in self._has_params.items() if v[0]() is not None}
        self._has_params[id(module)] = (weakref.ref(module), answer)
        return answer

    def live_optimizers(self) -> list[torch.optim.Optimizer]:
        """The optimizers that have stepped and still exist (``optimizers`` without a WeakSet's iteration)."""
        return [o for o in [r() for r in self._known_optimizers.values()] if o is not None]

    def trained_params(self) -> frozenset[int]:
        """ids of every parameter some optimizer owns (worked out once per step: checks ask on sampled steps)."""
        key = (self.step, self.optimizer_count)
        if self._trained[0] != key:
            self._trained = (key, frozenset(id(p) for opt in self.optimizers for g in opt.param_groups
                                            for p in g["params"]))
        return self._trained[1]

    def is_trained(self, model: nn.Module) -> bool:
        owned = self.trained_params()
        return any(id(p) in owned for p in model.parameters())

    def report(self, check: Check, *, where: str | None, evidence: dict[str, Any], values: dict[str, Any]) -> None:
        if check.id in self.reported_ids:
            return
        self.reported_ids.add(check.id)
        check.reported = True
        text = check.text.get(self.lang) or check.text["en"]
        fmt = _SafeFormat(values)
        finding = Finding(id=check.id, severity=check.severity,  # type: ignore[arg-type]
                          title=text.title.format_map(fmt), message=text.message.format_map(fmt), fix=text.fix.format_map(fmt),
                          where=where, evidence=_jsonable(evidence), step=self.step_offset + self.step)
        self.findings.append(finding)
        if self.on_finding is not None:
            self.on_finding(finding)

    def relax(self, check: Check, *methods: str) -> None:
        """From now on call these handlers of ``check`` on sampled steps only: a check whose every-step work
        is done (it has seen what it needed of each batch) stops costing the steps in between."""
        for m in methods:
            if (id(check), m) not in self._relaxed:  # (asked again on every sampled step after: nothing to do)
                self._relaxed.add((id(check), m))
                for table in (self._every_step, self._after_sampled, self._every_step_off, self._after_sampled_off):
                    table[m] = [(c, h) for c, h in table[m] if c is not check]
                if m == "on_fed":  # (handed over between windows only: it has no other table)
                    self._handlers[m] = [(c, h) for c, h in self._handlers[m] if c is not check]
                    self._fed_readers = self._handlers[m]
                    self._fed_skips = None  # (asked again of the readers left)

    def every_call(self, check: Check, method: str, on: bool = True) -> None:
        """For a while, call ``check``'s handler ``method`` on every step, whatever its marks say (a check that saw
        a bad batch go by looks closely at the next ones); ``on=False``: back to what its marks say."""
        kind, handler = type(check), getattr(check, method)
        self._coasting = 0
        wanted = ((self._every_step, acts_every_step(kind, method)),
                  (self._after_sampled, acts_after_sampled(kind, method)),
                  (self._every_step_off, acts_in_evaluation(kind, method)),
                  (self._after_sampled_off, acts_after_sampled(kind, method) or acts_in_evaluation(kind, method)))
        for table, marked in wanted:
            present = any(c is check for c, _ in table[method])
            if (on or marked) and not present:
                table[method] = [*table[method], (check, handler)]
            elif not (on or marked) and present:
                table[method] = [(c, h) for c, h in table[method] if c is not check]
        if self._installed:  # what stays installed between windows follows the tables (``_set_window``)
            self._set_window(self._window)

    def evaluating(self, on: bool) -> None:
        """Trainwell's loop begins (``on``) or ends an evaluation pass. Its training steps make no call with
        gradients off, so between windows the wrappers that only evaluation calls need (the loss functions', for
        ``overfitting`` and ``softmax-before-cross-entropy``) are in place during its evaluation passes alone."""
        self._evaluating = on
        if self._installed:
            self._set_window(self._window)

    def sorted_findings(self) -> list[Finding]:
        """The findings, most severe first, each symptom whose root cause was found folded into it (folding.py)."""
        from trainwell.doctor.folding import fold_symptoms

        return fold_symptoms(sorted(self.findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 9)))

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, method: str, *args: Any, grad_off: bool = False,
                  table: dict[str, list[tuple[Check, Callable[..., None]]]] | None = None) -> None:
        """Call ``method``'s handlers in the table for this step (``table``: another one) with ``args``."""
        handlers = (table if table is not None else self._active_off if grad_off else self._active)[method]
        if not handlers or _tracing():  # torch.jit.trace records what runs: the checks' work must stay out of it
            return
        if args and type(args[0]) in _TENSOR_EVENTS:  # (a step or zero_grad event carries no tensor to test)
            odd = _event_unjudgeable(args[0])
            if odd is not None:  # a sparse, nested or complex tensor: no check judges it (counted, not guessed at)
                self.unjudged[odd] = self.unjudged.get(odd, 0) + 1
                return
        quiet = self.quiet
        prev, quiet.active = quiet.active, True  # (not the context manager: this runs several times a step)
        try:
            # No copy: a check that raises is taken out by building new lists, never by changing this one.
            for check, handler in handlers:
                try:
                    handler(*args)
                except Exception as e:  # noqa: BLE001 - a broken check must never break the user's script
                    self._remove(check)
                    self.internal_error(check.id, method, e)
                    if self.debug:
                        raise
        finally:
            quiet.active = prev

    def _remove(self, check: Check) -> None:
        """Take a check that raised out of every table."""
        for table in self._tables():
            for name, hs in table.items():
                table[name] = [(c, h) for c, h in hs if c is not check]
        self._fed_readers = self._handlers["on_fed"]
        self._fed_skips = None
        self._first_batch = [(c, h) for c, h in self._first_batch if c is not check]

    def _tables(self) -> tuple[dict[str, list[tuple[Check, Callable[..., None]]]], ...]:
        return (self._handlers, self._every_step, self._after_sampled, self._every_step_off, self._after_sampled_off,
                self._repeated, self._first_step)

    def internal_error(self, check: str | None, handler: str, error: Exception) -> None:
        """Record the doctor's own failure (a check that raised is switched off; a hook that raised keeps
        running and is recorded once): the user's run goes on."""
        name = f"{check}.{handler}" if check else handler
        if name in self._failed:
            return
        self._failed.add(name)
        detail = f"{type(error).__name__}: {error}"
        self.internal_errors.append(f"{name}: {detail}")
        if self.on_internal_error is not None:
            self.on_internal_error(check, handler, detail)

    def end(self) -> None:
        self._flush_fed()
        self._dispatch("on_end")

    def error(self, exc: BaseException) -> None:
        self._flush_fed()
        self._dispatch("on_error", exc)

    # ------------------------------------------------------------------ install / uninstall

    def __enter__(self) -> Session:
        self.install()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.uninstall()

    def install(self) -> None:
        """Put the hooks and wrappers in place; if that fails half-way, what was done is undone."""
        if self._installed:
            return
        self._installed = True
        try:
            self._install()
        except BaseException:
            self.uninstall()
            raise

    def _install(self) -> None:
        self._undo.append(self._remove_module_hooks)
        self._watch_all_modules(True)
        saved_filters = warnings.filters[:]
        self._undo.append(lambda: _restore_warning_filters(saved_filters))
        warnings.filterwarnings("ignore", message=re.escape(_COMPILE_WARNING))
        self._patch(warnings, "warn", past_wrappers(warnings.warn))  # a library's warning names the script's line
        self._undo.append(lambda: self._step_pre_hook_on(False))
        self._step_pre_hook_on(True)
        self._undo.append(optimizer_hooks.register_optimizer_step_post_hook(self._step_post).remove)
        for name in LOSS_FUNCTIONS:
            fn = getattr(F, name)
            self._patch(F, name, self._wrap_loss(name, fn), switched="on_loss",
                        evaluation_only=self._wrap_loss(name, fn, evaluation_only=True))
        self._patch(torch.Tensor, "backward", self._wrap_backward(torch.Tensor.backward), by_loop=True)
        from torch.jit import _recursive as jit_recursive

        # torch.jit.script(model) compiles a model's forward hooks: the doctor's come off the model first.
        self._patch(jit_recursive, "create_script_module",
                    self._unhooked_first(jit_recursive.create_script_module))
        # torch.save(model) / copy.deepcopy(model): the doctor's hooks on a model are left out of its state.
        self._patch(nn.Module, "__getstate__", self._wrap_getstate(nn.Module.__getstate__))
        # Weights loaded before training (pretrained, a checkpoint): for the fine-tuning checks.
        self._patch(nn.Module, "load_state_dict", self._wrap_load_state_dict(nn.Module.load_state_dict))
        if self._handlers["on_zero_grad"]:  # the built-in checks judge the gradients themselves
            self._patch(torch.optim.Optimizer, "zero_grad", self._wrap_zero_grad(torch.optim.Optimizer.zero_grad),
                        switched="on_zero_grad")
            self._patch(nn.Module, "zero_grad", self._wrap_zero_grad(nn.Module.zero_grad), switched="on_zero_grad")
        it = dataloader_module._BaseDataLoaderIter
        self._patch(it, "__next__", self._wrap_next(it.__next__), by_loop=True)
        self._patch(torch, "compile", self._wrap_compile(torch.compile))
        self._patch(torch.export, "export", self._without_global_hooks(torch.export.export))
        # A new optimizer: its first step is seen with the pre-hook on (when a handler acts on first steps), and it
        # ends any coasting (``_coasting``).
        self._patch(torch.optim.Optimizer, "__init__", self._wrap_optimizer_init(torch.optim.Optimizer.__init__))
        if self._handlers["on_call"]:  # GradScaler, clipping, torch.save: for the mixed-precision and rank checks
            from trainwell.doctor.calls import watch_calls

            watch_calls(self)

    def _watch_all_modules(self, on: bool) -> None:
        """Global forward hooks (every module call, needed to find models and their layers) on or off.

        They are on for sampled steps; between them only the models already found are watched,
        through hooks on those models alone, so a step costs two hook calls instead of two per layer."""
        if on and not self._global_hooks:
            self._global_hooks.append(module_hooks.register_module_forward_pre_hook(self._forward_pre))
            self._global_hooks.append(module_hooks.register_module_forward_hook(self._forward_post))
            for (owner, name), (_, watched) in self._relu_functions.items():  # F.relu in forward(): for dead-relu
                setattr(owner, name, watched)
        elif not on and self._global_hooks and not self._hooks_pinned:
            for h in self._global_hooks:
                h.remove()
            self._global_hooks = []
            for (owner, name), (original, _) in self._relu_functions.items():
                setattr(owner, name, original)

    def pin_hooks(self) -> None:
        """Keep the global forward hooks (and F.relu's watched stand-in) in place from now on. Code compiled by
        torch.compile guards on the global hooks and on ``F.relu``: toggling them between sampled steps would
        recompile it on each sampled step until Dynamo's recompile limit, after which it runs uncompiled (and says
        so on stderr), which the script under ``python`` never does. Pinned, the hooks run on every module call
        outside compiled code (they do nothing inside it) and act on steps that are not sampled as the models'
        own hooks do."""
        self._hooks_pinned = True
        self._watch_all_modules(True)
        self._set_window(True)

    def _wrap_compile(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``torch.compile`` (also behind ``nn.Module.compile`` and ``@torch.compile``) that pins the hooks first."""
        session = self

        def compile(*args: Any, **kwargs: Any) -> Any:  # noqa: A001 - stands in for torch.compile
            session.pin_hooks()
            return fn(*args, **kwargs)

        return stand_in(compile, fn)

    def _without_global_hooks(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``torch.export.export`` run with the global forward hooks off (put back after it, pinned or not): its
        strict mode (Dynamo) cannot trace a model while global module hooks exist ("Attempted to inline function
        marked as skipped": ``ModuleToTrace.forward``), which under ``python`` it never meets."""
        session = self

        def export(*args: Any, **kwargs: Any) -> Any:
            on, pinned = bool(session._global_hooks), session._hooks_pinned
            session._hooks_pinned = False
            session._watch_all_modules(False)
            try:
                return fn(*args, **kwargs)
            finally:
                session._hooks_pinned = pinned
                if on:
                    session._watch_all_modules(True)

        return stand_in(export, fn)

    def _wrap_relu(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        session = self

        def relu(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            # _compiling() first: while torch.compile traces, session state must not be touched at all.
            if (not (_dynamo_compiling() or _compiler._is_compiling_flag) and session._relus is not None
                    and session._stack and not session.quiet.active):
                relus = session._relus
                # One entry per ReLU: F.relu calls torch.relu (both watched: the same output twice), and a leaf
                # nn.ReLU's output is already among the leaf calls (one with children of its own is not a leaf).
                top = session._stack[-1]
                if (not (relus and relus[-1] is out) and not (isinstance(top, nn.ReLU) and not top._modules)
                        and unjudgeable(out) is None):
                    relus.append(out)
            return out

        return stand_in(relu, fn)

    def reported_by_caller(self, *modules: nn.Module) -> Callable[[nn.Module, tuple[Any, ...], Any], None]:
        """For a training loop that reports its own calls of ``modules`` (trainwell's): they get no forward hooks
        of their own (a module with hooks takes torch's slower call path on every call). The loop calls
        ``after(module, args, output)`` (returned) after each call instead, each call a top-level one. On sampled
        steps the global hooks see the calls, and it does nothing, as the model's own hook would not."""
        for module in modules:
            self._caller_reports[id(module)] = weakref.ref(module)
        return self._reported_call

    def loop_reports(self, switch: Callable[[bool], None], dataset: Any) -> None:
        """For a training loop that can report each training micro-batch itself (trainwell's, whose batches come
        from a DataLoader of ``dataset``): between windows, outside evaluation, the session takes its wrappers of
        ``Tensor.backward`` and the DataLoader's ``next`` out, and the loop calls ``loop_step`` after each
        micro-batch's backward() instead: one call in place of three wrappers, on the steps that are most of a run.
        ``switch(on)`` turns the loop's reports on (and its ``reported_by_caller`` calls off) or back."""
        self._loop, self._loop_dataset = switch, id(dataset)
        if self._installed:
            self._set_window(self._window)

    def loop_step(self, module: nn.Module, args: tuple[Any, ...], output: Any, loss: torch.Tensor,
                  fetched: int) -> None:
        """A training micro-batch of the loop that reports (``loop_reports``), told after its backward(): what the
        DataLoader's ``next`` (``fetched`` batches, for the first micro-batch of a step), the model call and
        ``backward()`` would each have recorded, in that order."""
        if self.quiet.active:
            return
        try:
            if fetched:
                self.batches += fetched
                self.batch_dataset = self._loop_dataset
            value = None
            scalar = loss.numel() == 1 and loss.is_floating_point()
            if scalar and loss.is_cpu:
                value = loss.item()
            skips = self._fed_skips
            # A call that no reader of recorded calls needs (``Check.skips_fed``) is not recorded: its loss is a
            # finite scalar read here, and it is the only model call before this backward().
            record = not (skips is not None and value is not None and math.isfinite(value)
                          and not self.calls_since_backward and self._skips_fed(module, skips))
            active = self._active
            if (not record and not active["on_forward"] and not active["on_backward"] and _grad_enabled()
                    and self.has_parameters(module)):
                # The usual step of the run: no handler acts on it and nothing is recorded, so of what
                # ``_top_call`` and ``_backward_done`` do only the session's records are left.
                self._note_call(args[0] if args else None, output)
                self.backward_count += 1
                self._note_loss(loss, value)
                return
            self._top_call(module, args, output, 2, record=record)
            calls = self.calls_since_backward
            self.calls_since_backward = 0
            self.backward_count += 1
            if scalar:
                self._note_loss(loss, value)
            if calls != 1 or self._active["on_backward"]:
                self._backward_done(loss, calls, _getframe(1))
        except Exception as e:  # noqa: BLE001 - the loop must never fail for the doctor
            self._hook_failed("loop_step", e)

    def _skips_fed(self, module: nn.Module, skips: dict[int, tuple[Any, bool]]) -> bool:
        """Whether every reader of recorded calls can go without ``module``'s (``Check.skips_fed``), asked once per
        model after a hand-over that none needed. A check that fails to say needs them: its failure is an internal
        error, said once, and the calls are recorded."""
        known = skips.get(id(module))
        if known is not None and known[0]() is module:
            return known[1]
        answer = True
        quiet = self.quiet
        prev, quiet.active = quiet.active, True  # (the checks' own tensor work stays unseen)
        try:
            for check, _ in self._fed_readers:
                try:
                    answer = check.skips_fed(module)
                except Exception as e:  # noqa: BLE001 - a broken check must never break the user's script
                    self.internal_error(check.id, "skips_fed", e)
                    if self.debug:
                        raise
                    answer = False
                if not answer:
                    break
        finally:
            quiet.active = prev
        skips[id(module)] = (weakref.ref(module), answer)
        return answer

    def _watch_model(self, module: nn.Module) -> None:
        if id(module) not in self._model_hooks:
            known = self._caller_reports.get(id(module))
            if known is not None and known() is module:
                return  # its loop reports its calls (``reported_by_caller``)
            if isinstance(module, torch.jit.ScriptModule):
                return  # a scripted or traced module takes no Python hooks (its calls are seen on sampled steps)
            if isinstance(module, _Loss) and not self.has_parameters(module):
                return  # a loss module: its loss function reports every call, sampled steps show the module
            if not self._nesting and self._holds_or_held(module):
                self._nest()
            handles = [module.register_forward_hook(self._model_post)]
            if self._nesting:
                handles.append(module.register_forward_pre_hook(self._model_pre))
            self._model_hooks[id(module)] = handles

    def _holds_or_held(self, module: nn.Module) -> bool:
        """Whether ``module`` holds a model already found, or is held by one (once per model found)."""
        others = [m for m in list(self.models) if m is not module]
        if not others:
            return False
        inside = {id(m) for m in module.modules()}
        return any(id(m) in inside or any(x is module for x in m.modules()) for m in others)

    def _nest(self) -> None:
        """Watched models nest: from now on each gets a forward pre-hook as well (see ``_nesting``)."""
        self._nesting = True
        for key, handles in list(self._model_hooks.items()):
            module = next((m for m in list(self.models) if id(m) == key), None)
            if module is not None and len(handles) == 1:
                handles.append(module.register_forward_pre_hook(self._model_pre))

    def _remove_module_hooks(self) -> None:
        self._hooks_pinned = False  # (uninstalling: pinned or not, they go)
        self._watch_all_modules(False)
        for handles in self._model_hooks.values():
            for h in handles:
                h.remove()
        self._model_hooks.clear()

    def user_hooks(self, module: nn.Module) -> bool:
        """Whether the user put forward hooks on ``module`` (the doctor's own do not count)."""
        own = {h.id for h in self._model_hooks.get(id(module), [])}
        return any(k not in own for k in (*module._forward_hooks, *module._forward_pre_hooks))

    def uninstall(self) -> None:
        """Undo every patch and hook, newest first; one that fails does not stop the others."""
        failures: list[BaseException] = []
        while self._undo:
            try:
                self._undo.pop()()
            except BaseException as e:  # noqa: BLE001 - the rest must still be undone
                failures.append(e)
        self._installed = False
        if self._by_loop:
            self._by_loop = False
            try:
                self._loop(False)  # type: ignore[misc]
            except Exception as e:  # noqa: BLE001 - what is undone stays undone
                failures.append(e)
        self._stack.clear()
        self._switched.clear()
        self._loop_patches.clear()
        self._window = True
        if failures:
            raise failures[0]

    def _patch(self, owner: Any, name: str, replacement: Any, switched: str | None = None,
               by_loop: bool = False, evaluation_only: Any = None) -> None:
        """Put ``replacement`` in place of ``owner.name`` until ``uninstall``. ``switched``: the event it gives,
        for a wrapper that between windows is in place only while that event has an every-step handler (or, while
        only calls with gradients off have one, ``evaluation_only``: a form of it that returns at once from a call
        with gradients on); ``by_loop``: a wrapper that a reporting loop's ``loop_step`` stands in for
        (``loop_reports``)."""
        original = owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name)
        setattr(owner, name, replacement)
        self._undo.append(lambda: setattr(owner, name, original))
        if switched is not None:
            self._switched.setdefault(switched, []).append(
                (owner, name, original, replacement, replacement if evaluation_only is None else evaluation_only))
        if by_loop:
            self._loop_patches.append((owner, name, original, replacement))

    def _set_window(self, open_: bool) -> None:
        """Open or close a window (a sampled step and the step after it). While one is open, or once the hooks are
        pinned for torch.compile, every wrapper is in place; between windows, a wrapper whose event has no handler
        left that acts on every step (or on calls with gradients off) is taken out, and the library's own function
        runs at no cost. The step post-hook, ``backward`` (it copies every loss for ``session.losses`` and counts
        backward passes), the DataLoader's ``next`` (it counts and times batches) and the models' own forward hooks
        (they keep the module stack a crash is explained from) stay in place."""
        self._window = open_
        self._coasting = 0
        # Calls with gradients off are evaluation: in trainwell's loop, which says when it evaluates
        # (``evaluating``), the wrappers for them are in place only then; a script's can come at any time.
        evaluation = self._evaluating or not self.in_trainer
        for event, patches in self._switched.items():
            every = open_ or self._hooks_pinned or bool(self._every_step[event])
            off_only = not every and evaluation and bool(self._every_step_off[event])
            for owner, name, original, wrapper, lean in patches:
                wanted = wrapper if every else lean if off_only else original
                now = owner.__dict__.get(name)
                # (one put there since by someone else is left alone)
                if now is not wanted and (now is original or now is wrapper or now is lean):
                    setattr(owner, name, wanted)
        pre = open_ or self._hooks_pinned or bool(self._every_step["on_step_pre"]
                                                  or (self._first_step["on_step_pre"] and self._fresh))
        self._step_pre_hook_on(pre)
        # The loop reports its micro-batches while nothing needs a training batch's backward() before it runs, or
        # the batch itself, as it comes (``loop_step`` tells both after the fact).
        by_loop = self._loop is not None and not (open_ or self._hooks_pinned or self._evaluating
                                                  or self._every_step["on_backward_pre"]
                                                  or self._every_step["on_batch"] or self._first_batch)
        if by_loop != self._by_loop:
            self._loop_on(by_loop)

    def _loop_on(self, on: bool) -> None:
        """Turn the loop's reports on (the backward() and DataLoader wrappers out) or off (back in)."""
        for owner, name, original, wrapper in self._loop_patches:
            now = owner.__dict__.get(name)
            if now is (wrapper if on else original):  # (one put there since by someone else is left alone)
                setattr(owner, name, original if on else wrapper)
        self._by_loop = on
        if self._loop is not None:
            self._loop(on)

    def _step_pre_hook_on(self, on: bool) -> None:
        """Register the optimizer step pre-hook, or remove it (each at most once)."""
        if on and self._step_pre_hook is None:
            self._step_pre_hook = optimizer_hooks.register_optimizer_step_pre_hook(self._step_pre)
        elif not on and self._step_pre_hook is not None:
            self._step_pre_hook.remove()
            self._step_pre_hook = None

    # ------------------------------------------------------------------ hooks

    @_safe
    def _forward_pre(self, module: nn.Module, args: tuple[Any, ...]) -> None:
        if self.quiet.active:
            return
        if not self._stack:
            self._leaves = [] if self.sampled or module not in self.models else None
            self._relus = [] if self._leaves is not None else None
        self._stack.append(module)

    @_safe
    def _forward_post(self, module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        if self.quiet.active or not self._stack:
            return
        # Pop up to and including this module (a caught exception can leave stale entries).
        while self._stack and self._stack.pop() is not module:
            pass
        if self._stack and not self._nesting and id(module) in self._model_hooks:
            self._nest()  # a watched model ran inside another module's forward
        if self._leaves is not None and not any(True for _ in module.children()):
            x = args[0] if args else None
            if unjudgeable(x) is None and unjudgeable(output) is None:  # (a leaf given a sparse tensor is left out)
                self._leaves.append((module, x, output))
        if not self._stack:
            self.models.add(module)
            self._watch_model(module)
            leaves, self._leaves = self._leaves, None
            relus, self._relus = self._relus, None
            self._top_call(module, args, output, 3, leaves, relus)

    # The four hooks below run on every step: _safe's guard is written into each (one call less per hook),
    # the compile check first (while torch.compile traces, session state must not be touched at all).

    def _model_pre(self, module: nn.Module, args: tuple[Any, ...]) -> None:
        if not (_dynamo_compiling() or _compiler._is_compiling_flag or self._global_hooks or self.quiet.active):
            self._stack.append(module)

    def _model_post(self, module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        if _dynamo_compiling() or _compiler._is_compiling_flag or self._global_hooks or self.quiet.active:
            return  # (on sampled steps, and always once pinned for torch.compile, the global hooks see the call)
        try:
            if not self._nesting or self._outermost(module):
                self._top_call(module, args, output, 2)
        except Exception as e:  # noqa: BLE001 - the hook must never raise into the user's code
            self._hook_failed("_model_post", e)

    def _outermost(self, module: nn.Module) -> bool:
        """Pop the stack down to ``module`` (a caught exception can leave stale entries above it); whether it was
        there and nothing was running around it."""
        stack = self._stack
        while stack:
            if stack.pop() is module:
                return not stack
        return False

    def _reported_call(self, module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        """A model call that trainwell's loop reports (``reported_by_caller``): a top-level call. (The loop calls
        this outside any compiled code: no compile check.)"""
        if self._global_hooks or self.quiet.active:
            return
        try:
            self._top_call(module, args, output, 2)
        except Exception as e:  # noqa: BLE001 - the hook must never raise into the user's code
            self._hook_failed("_reported_call", e)

    def _top_call(self, module: nn.Module, args: tuple[Any, ...], output: Any, depth: int,
                  leaves: list[tuple[nn.Module, Any, Any]] | None = None, relus: list[Any] | None = None,
                  record: bool = True) -> None:
        """A top-level model call returned (either hook path): the session's cheap records of it, then the event
        for the handlers that act now. Between windows a call with gradients on is recorded for ``on_fed``
        instead of dispatched, and only a repeated call before backward() reaches the handlers that ask for it.
        ``depth``: how far up the stack the hook that saw the call is (an event is given that frame, made only
        when an event is); ``record``: False for a call no reader of recorded calls needs (``loop_step``)."""
        x = args[0] if args else None
        self._note_call(x, output)
        if _grad_enabled():
            known = self._has_params.get(id(module))  # (has_parameters, its usual answer inlined: every call)
            if known[1] if known is not None and known[0]() is module else self.has_parameters(module):
                self.calls_since_backward = calls = self.calls_since_backward + 1
                if record and self._fed_readers and not self.sampled:
                    # The usual model(x) recorded here (``_feed``, inlined): a plain tensor input of its own.
                    # (A nested or complex one is told apart when the records are read.)
                    if len(args) == 1 and type(x) is _Tensor and x.layout is _STRIDED and not x.is_inference():
                        self._fed.append((module, args, self.call_batch, x._version))  # (a FedCall if read)
                        self._fed_bytes += x.nbytes
                        if self._fed_at_once or self._fed_bytes > FED_BYTES:
                            self._flush_fed()
                    else:
                        self._feed(module, args)
                if calls > 1 and self._active is self._every_step and self._repeated["on_forward"]:
                    self._dispatch("on_forward", ForwardEvent(module, args, output, True, _getframe(depth)),
                                   table=self._repeated)
            if self._active["on_forward"]:
                self._dispatch("on_forward", ForwardEvent(module, args, output, True, _getframe(depth), leaves, relus))
        elif self._active_off["on_forward"]:
            if self._fed:  # the training calls made before this evaluation reach the checks first
                self._flush_fed()
            self._dispatch("on_forward", ForwardEvent(module, args, output, False, _getframe(depth), leaves, relus),
                           grad_off=True)

    def _note_call(self, x: Any, output: Any) -> None:
        """The records every top-level model call updates: its shapes (``last_forward``) and ``call_batch``."""
        if isinstance(x, _Tensor) and isinstance(output, _Tensor):
            shape, out_shape = x.shape, output.shape  # (torch.Size is a tuple: no copy)
            if shape and out_shape:
                self._last_shapes = (shape, out_shape)
        batches = self.batches
        if batches != self._call_batches:
            self._call_batches = batches
            self.call_batch = self.batch_dataset
        else:
            self.call_batch = None

    def _feed(self, module: nn.Module, args: tuple[Any, ...]) -> None:
        """Record a call with gradients on of a model (a module with parameters) made between windows (see
        ``Check.on_fed``): references to its inputs and their versions, no tensor work. (The usual model(x), one
        plain tensor, is recorded by ``_top_call`` itself.)"""
        versions: list[int] = []
        size = 0
        now = self._fed_at_once
        for a in args:
            if isinstance(a, _Tensor):
                if a.layout is not _STRIDED or a.is_nested or a.dtype.is_complex:
                    kind = _kind(a)  # no check judges it (counted, as the dispatch does)
                    self.unjudged[kind] = self.unjudged.get(kind, 0) + 1
                    return
                if a.is_inference():  # no version to tell a later change by: handed over at once
                    now = True
                    versions.append(-1)
                else:
                    versions.append(a._version)
                size += a.nbytes
            elif isinstance(a, (list, tuple, dict)):  # tensors inside a container: their versions are not kept
                now = True
        self._fed.append((module, args, self.call_batch, versions))
        self._fed_bytes += size
        if now or self._fed_bytes > FED_BYTES:
            self._flush_fed()

    def _flush_fed(self) -> None:
        """Hand the recorded calls to the ``on_fed`` handlers, leaving out any whose inputs changed in place since
        (what the model saw is gone: from then on each call is handed over when it is made)."""
        fed, self._fed, self._fed_bytes = self._fed, [], 0
        readers = self._needing_fed() if fed else []
        if fed:  # none needed these: the loop may leave out the calls that readers can go without
            self._fed_skips = None if readers else {}
        if not readers:  # dropped unread; the oldest still tells a buffer reused in place (handed over at once then)
            if fed and self._changed(fed[0][1], fed[0][3]):
                self._fed_at_once = True
            return
        calls = []
        changed = self._changed
        for module, inputs, batch, versions in fed:
            if changed(inputs, versions):
                self._fed_at_once = True
                continue
            if type(versions) is int and (inputs[0].is_nested or inputs[0].dtype.is_complex):
                kind = _kind(inputs[0])  # (the usual model(x), recorded without this test: no check judges it)
                self.unjudged[kind] = self.unjudged.get(kind, 0) + 1
                continue
            calls.append(FedCall(module, inputs, batch))
        if calls:
            self._dispatch("on_fed", calls, table={"on_fed": readers})

    @staticmethod
    def _changed(inputs: tuple[Any, ...], versions: int | list[int]) -> bool:
        """Whether a recorded call's tensor inputs were changed in place since it was made (``versions``: the one
        tensor input's version, or a list of its tensor inputs' versions, -1 for one that has none)."""
        if isinstance(versions, int):  # the usual model(x) (see _feed)
            return versions != inputs[0]._version
        return bool(versions) and any(v >= 0 and v != t._version for v, t in
                                      zip(versions, [a for a in inputs if isinstance(a, _Tensor)]))

    def _needing_fed(self) -> list[tuple[Check, Callable[..., None]]]:
        """The ``on_fed`` handlers whose checks need the calls now (``Check.needs_fed``; one that fails to say is
        given them, and its handler's failure is then reported as any other)."""
        readers = []
        quiet = self.quiet
        prev, quiet.active = quiet.active, True  # (the checks' own tensor work stays unseen)
        try:
            for check, handler in self._fed_readers:
                try:
                    needed = check.needs_fed()
                except Exception:  # noqa: BLE001 - the handler is called, and reports what is wrong
                    needed = True
                if needed:
                    readers.append((check, handler))
        finally:
            quiet.active = prev
        return readers

    def _hook_failed(self, name: str, error: Exception) -> None:
        """A hook's own failure: recorded (and said) once, the user's code goes on; raised under ``--debug``."""
        self.internal_error(None, name, error)
        if self.debug:
            raise error

    def current_module_stack(self) -> list[nn.Module]:
        """The modules whose forward was running (outermost first): after an error, where it broke."""
        return list(self._stack)

    def _wrap_loss(self, name: str, fn: Callable[..., Any], evaluation_only: bool = False) -> Callable[..., Any]:
        """The loss function ``F.name`` watched; ``evaluation_only``: the form in place between windows while only
        calls with gradients off have a handler, which returns from a training call at once."""
        session = self

        if evaluation_only:
            def lean_loss_fn(input: Any, target: Any, *args: Any, **kwargs: Any) -> Any:
                out = fn(input, target, *args, **kwargs)
                if not (_grad_enabled() or _dynamo_compiling() or _compiler._is_compiling_flag
                        or session.quiet.active):
                    session._loss_called(name, input, target, out, kwargs, True)
                return out

            return stand_in(lean_loss_fn, fn)

        def loss_fn(input: Any, target: Any, *args: Any, **kwargs: Any) -> Any:
            out = fn(input, target, *args, **kwargs)
            if not (_dynamo_compiling() or _compiler._is_compiling_flag or session.quiet.active):
                session._loss_called(name, input, target, out, kwargs, not _grad_enabled())
            return out

        return stand_in(loss_fn, fn)

    def _loss_called(self, name: str, input: Any, target: Any, out: Any, kwargs: dict[str, Any], off: bool) -> None:
        """A loss function returned (either form of its wrapper): the event, for the handlers that act now."""
        if (self._active_off if off else self._active)["on_loss"]:
            self._dispatch("on_loss", LossEvent(name, input, target, out, kwargs, _getframe(2)), grad_off=off)

    def _unhooked_first(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn(module, ...)`` once the doctor's own hooks are off ``module`` and its submodules (put back on when
        the module is next seen on a sampled step)."""
        session = self

        def create_script_module(nn_module: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(nn_module, nn.Module):
                for m in nn_module.modules():
                    for h in session._model_hooks.pop(id(m), ()):
                        h.remove()
            return fn(nn_module, *args, **kwargs)

        return create_script_module

    def _wrap_load_state_dict(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        session = self

        def load_state_dict(module: nn.Module, *args: Any, **kwargs: Any) -> Any:
            result = fn(module, *args, **kwargs)
            if not (session.quiet.active or _compiling()):
                try:
                    # Weights copied into a model already being trained (a rollback to its best epoch) are not
                    # a start from pretrained weights.
                    if not session.is_trained(module):
                        session.loaded.note(module)
                except Exception as e:  # noqa: BLE001 - the hook must never raise into the user's code
                    session._hook_failed("load_state_dict", e)
            return result

        return stand_in(load_state_dict, fn)

    def _wrap_getstate(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``Module.__getstate__`` without the doctor's own forward hooks (bound to the session, which cannot be
        pickled, and which a copy or a saved model must not carry): runs only when a module is pickled or copied."""
        session = self

        def __getstate__(module: nn.Module) -> Any:
            state = fn(module)
            if id(module) not in session._model_hooks or not isinstance(state, dict):
                return state
            own = (session._model_pre, session._model_post)
            state = dict(state)
            for attr in ("_forward_pre_hooks", "_forward_hooks"):
                hooks = state.get(attr)
                if hooks and any(h in own for h in hooks.values()):
                    state[attr] = type(hooks)((k, h) for k, h in hooks.items() if h not in own)
            return state

        __getstate__.__doc__ = fn.__doc__
        return __getstate__

    def _wrap_backward(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        session = self

        def backward(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if _dynamo_compiling() or _compiler._is_compiling_flag or session.quiet.active:
                return fn(tensor, *args, **kwargs)
            if session._stack:
                session._stack.clear()  # no forward is running now
            calls = session.calls_since_backward
            session.calls_since_backward = 0
            if session._active["on_backward_pre"]:
                session._dispatch("on_backward_pre", BackwardEvent(tensor, _getframe(1)))
            result = fn(tensor, *args, **kwargs)
            session.backward_count += 1
            if tensor.numel() == 1 and tensor.is_floating_point():
                session._note_loss(tensor)
            # (The table read again: an optimizer may step inside backward(), from a gradient hook.)
            if calls != 1 or session._active["on_backward"]:
                session._backward_done(tensor, calls, _getframe(1))
            return result

        backward.__doc__ = fn.__doc__
        return skipped(backward)

    def _note_loss(self, tensor: torch.Tensor, value: float | None = None) -> None:
        """A scalar floating-point loss (given to ``backward()``) for ``losses``, at the step now (``value``: the
        loss on the CPU, read already)."""
        if tensor.is_cpu:  # read now: no device to wait for
            if self._pending_losses:
                self._losses += read_back(self._pending_losses)
                self._pending_losses = []
            self._losses.append(tensor.item() if value is None else value)
        else:
            self._keep_loss(tensor)
        self.loss_steps.append(self.step)

    def _keep_loss(self, tensor: torch.Tensor) -> None:
        """Keep a scalar loss on a device for ``losses``, read back later with the others. A copy, not the tensor:
        the script may change it later without a trace (an all_reduce for logging, .data, a CUDA graph's output
        rewritten by the next replay), and a loss sliced out of a big tensor must not keep that tensor alive. (One
        op for the usual float32 scalar: a clone; a cast copies by itself.)"""
        loss = tensor.detach()
        loss = loss.clone() if loss.dtype == torch.float32 else loss.to(torch.float32)
        self._pending_losses.append(loss.reshape(()) if loss.ndim else loss)

    def _backward_done(self, tensor: torch.Tensor, calls: int, frame: Any) -> None:
        """After a ``backward()`` that a handler acts on, or that did not follow exactly one model call."""
        ev = BackwardEvent(tensor, frame)
        active = self._active
        if active["on_backward"]:
            self._dispatch("on_backward", ev)
        if calls != 1:
            self.shared_backwards += 1
            if calls > 1 and active is self._every_step and self._repeated["on_backward"]:
                self._dispatch("on_backward", ev, table=self._repeated)

    def _wrap_optimizer_init(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``Optimizer.__init__`` that notes the new optimizer: its first step, whenever it comes, is seen with the
        step pre-hook on (between windows the hook is off otherwise)."""
        session = self

        def __init__(optimizer: Any, *args: Any, **kwargs: Any) -> None:
            fn(optimizer, *args, **kwargs)
            session._coasting = 0  # (a new optimizer may take a freed one's id)
            if session._installed and session._first_step["on_step_pre"] and not (session.quiet.active
                                                                                 or _compiling()):
                try:
                    session._fresh.add(optimizer)
                    session._step_pre_hook_on(True)
                except Exception as e:  # noqa: BLE001 - the hook must never raise into the user's code
                    session._hook_failed("Optimizer.__init__", e)

        __init__.__doc__ = fn.__doc__
        __init__.__wrapped__ = fn  # type: ignore[attr-defined]  (inspect.signature shows the original's)
        return skipped(__init__)

    def _wrap_zero_grad(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        session = self

        def zero_grad(owner: Any, *args: Any, **kwargs: Any) -> Any:
            result = fn(owner, *args, **kwargs)
            if session._active["on_zero_grad"] and not session.quiet.active:
                session._dispatch("on_zero_grad", ZeroGradEvent(owner, _getframe(1)))
            return result

        zero_grad.__doc__ = fn.__doc__
        return skipped(zero_grad)

    def _wrap_next(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        session = self

        def __next__(it: Any) -> Any:
            handed = session._active["on_batch"] or session._first_batch  # (else the batch is only counted)
            started = time.perf_counter() if handed else 0.0
            batch = fn(it)  # StopIteration passes through
            if not session.quiet.active:
                session.batches += 1
                info = session._iterator
                if info[0]() is not it:
                    info = session._iterator_info(it)
                session.batch_dataset = info[1]
                if handed and session._active["on_batch"]:
                    session._dispatch("on_batch", BatchEvent(batch, time.perf_counter() - started, _getframe(1), it))
                elif (handed and session._active is session._every_step
                      and getattr(it, "_num_yielded", None) == 1):  # a new pass's first batch
                    session._dispatch("on_batch", BatchEvent(batch, time.perf_counter() - started, _getframe(1), it),
                                      table={"on_batch": session._first_batch})
            return batch

        return skipped(__next__)

    def _iterator_info(self, it: Any) -> tuple[Any, int]:
        """What is read once from a DataLoader iterator (see ``_iterator``); remembered while it is the latest."""
        info = (_nothing, id(getattr(it, "_dataset", it)))
        try:
            info = (weakref.ref(it), info[1])
        except TypeError:  # an iterator that takes no weak reference: read again for each batch
            return info
        self._iterator = info
        return info

    def _step_pre(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if _dynamo_compiling() or _compiler._is_compiling_flag or self.quiet.active:
            return
        try:
            self._stepping_now(optimizer)
            if self._active["on_step_pre"]:
                self._dispatch("on_step_pre", StepEvent(optimizer, _getframe(1)))
            if self._first_step_now and self._active is self._every_step and self._first_step["on_step_pre"]:
                self._dispatch("on_step_pre", StepEvent(optimizer, _getframe(1)), table=self._first_step)
            if self.sampled and self.before_sampled_step is not None:
                with self.quiet():
                    self.before_sampled_step(optimizer)
        except Exception as e:  # noqa: BLE001
            self._hook_failed("_step_pre", e)

    def _stepping_now(self, optimizer: torch.optim.Optimizer) -> None:
        """Note the optimizer about to step (once per step, from whichever step hook is on): a new one is added
        to those known, and the steps in a row of the one before it are kept (``previous_optimizer_steps``)."""
        stepping = self._stepping
        if stepping is not None and stepping() is optimizer:
            if self._first_step_now and self.steps_in_a_row:  # (the post-hook of its first step has run)
                self._first_step_now = False
            return
        self.previous_optimizer_steps = self.steps_in_a_row
        self._stepping, self.steps_in_a_row = weakref.ref(optimizer), 0
        known = self._known_optimizers.get(id(optimizer))
        self._first_step_now = known is None or known() is not optimizer
        if self._first_step_now:
            self._known(optimizer)

    def _known(self, optimizer: torch.optim.Optimizer) -> None:
        self._fresh.discard(optimizer)
        self.optimizers.add(optimizer)
        self.optimizer_count += 1
        self._known_optimizers[id(optimizer)] = weakref.ref(optimizer)

    def _step_post(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if _dynamo_compiling() or _compiler._is_compiling_flag or self.quiet.active:
            return
        if id(optimizer) == self._coasting:  # (see ``_coasting``: the usual step between windows)
            self.steps_in_a_row += 1
            self.step = step = self.step + 1
            if step < self._next_window:
                return
            self._coasting = 0
            try:
                self._step_ended(step)  # a window opens
            except Exception as e:  # noqa: BLE001
                self._hook_failed("_step_post", e)
            return
        self._coasting = 0  # (another optimizer, or none coasting: the whole path)
        try:
            if self._step_pre_hook is None:  # between windows: the pre-hook is off, an optimizer is found here
                stepping = self._stepping
                if stepping is None or self._first_step_now or stepping() is not optimizer:
                    self._stepping_now(optimizer)
            active = self._active
            if active["on_step"]:
                self._dispatch("on_step", StepEvent(optimizer, _getframe(1)))
            if self._first_step_now and active is self._every_step:
                if self._first_step["on_step"]:
                    self._dispatch("on_step", StepEvent(optimizer, _getframe(1)), table=self._first_step)
                if self._step_pre_hook is not None:
                    self._set_window(False)  # a new optimizer's first step is over: the pre-hook goes off again
            self.steps_in_a_row += 1
            self.step = step = self.step + 1
            if step < self._next_window and not self._window:
                # Between windows until the next sampled step: nothing changes. The next steps of this optimizer
                # only count, while nothing acts on them.
                if not (self._step_pre_hook is not None or self._first_step_now or active["on_step"]):
                    self._coasting = id(optimizer)
                return
            self._step_ended(step)
        except Exception as e:  # noqa: BLE001
            self._hook_failed("_step_post", e)

    def _step_ended(self, step: int) -> None:
        """A step that opens or closes a window ended: switch the handler tables, wrappers and global hooks."""
        after = self.sampled
        self.sampled = sampled = self.sampled_at(step)
        if sampled:
            self._active = self._active_off = self._handlers
            if self._fed:  # the window opens: the calls recorded since the last one first
                self._flush_fed()
        else:
            if after:
                self._active, self._active_off = self._after_sampled, self._after_sampled_off
            else:
                self._active, self._active_off = self._every_step, self._every_step_off
            self._next_window = self.next_sampled(step)
        if (sampled or after) != self._window:
            self._set_window(sampled or after)
        if sampled or self._global_hooks:
            self._watch_all_modules(sampled)


class _ReportedIds(set):  # type: ignore[type-arg]
    """The ids of the checks that reported; adding one marks the session's check of that id as ``reported``."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self._session = session

    def add(self, check_id: str) -> None:
        super().add(check_id)
        for check in getattr(self._session, "checks", ()):
            if check.id == check_id:
                check.reported = True


class _SafeFormat(dict):  # type: ignore[type-arg]
    """Formatting values for messages: floats shortened, missing names left visible."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__({k: _short(v) for k, v in values.items()})

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _short(v: Any) -> Any:
    if isinstance(v, float) and math.isfinite(v):
        return f"{v:.4g}"
    return v


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, torch.Tensor):
        return v.tolist() if v.numel() <= 20 else f"tensor{tuple(v.shape)}"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


