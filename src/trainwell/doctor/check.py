"""The shape of a doctor check, and the registry ``trainwell checks`` lists.

A check is a small class with a stable ``id``, a ``severity``, its text in English and
Chinese, and the event handlers it needs. It reports through ``session.report``. Checks
judge behaviour (values, gradients, call order, object lifetimes), never names or source
text, and must stay quiet on correct code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from trainwell._registry import Registry

if TYPE_CHECKING:
    from torch import nn

    from trainwell.doctor.events import (BackwardEvent, BatchEvent, CallEvent, FedCall, ForwardEvent,
                                         LossEvent, StepEvent, ZeroGradEvent)
    from trainwell.doctor.session import Session


H = TypeVar("H")


@dataclass(frozen=True)
class Text:
    """One language's words for a check. ``title``, ``message`` and ``fix`` may hold ``{placeholders}``
    filled from the values passed to ``session.report``; a title with placeholders needs ``general``,
    the same title without them, for ``trainwell checks`` (which has no finding to fill them from)."""

    title: str
    message: str
    fix: str
    general: str = ""

    @property
    def listing(self) -> str:
        """The title shown where there is no finding: no placeholders."""
        return self.general or self.title


PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


class Check:
    id: ClassVar[str]
    severity: ClassVar[str]  # "error" (certainly wrong), "warning" (very likely wrong), "info" (advice)
    summary: ClassVar[str]  # one line for `trainwell checks`
    text: ClassVar[dict[str, Text]]  # {"en": Text(...), "zh": Text(...)}
    # Judges the training loop's own code (zero_grad, modes, set_epoch, the GradScaler, what each rank saves):
    # off inside trainwell's loop, which is written and tested to do these right; data, model and
    # optimization checks run there as in any script.
    loop_only: ClassVar[bool] = False

    def __init__(self, session: Session) -> None:
        self.session = session
        # Whether this check's finding was reported (this run, or before a resume): an attribute, not a
        # property, since handlers ask on every call; the session's ``reported_ids`` keeps it up to date.
        self.reported = self.id in getattr(session, "reported_ids", ())

    def report(self, where: str | None = None, evidence: dict[str, Any] | None = None, **values: Any) -> None:
        """Report this check's finding (once per run; later calls are ignored)."""
        self.session.report(self, where=where, evidence=evidence or {}, values=values)

    # Event handlers: override what the check needs. Each runs inside a guard, so an
    # exception in a check disables that check and never breaks the user's script.
    def on_forward(self, ev: ForwardEvent) -> None: ...  # a top-level model call returned

    def on_loss(self, ev: LossEvent) -> None: ...  # a loss function returned

    def on_backward_pre(self, ev: BackwardEvent) -> None: ...

    def on_backward(self, ev: BackwardEvent) -> None: ...  # backward() finished

    def on_zero_grad(self, ev: ZeroGradEvent) -> None: ...

    def on_step_pre(self, ev: StepEvent) -> None: ...  # optimizer.step() is about to run

    def on_step(self, ev: StepEvent) -> None: ...  # optimizer.step() finished

    def on_batch(self, ev: BatchEvent) -> None: ...  # a DataLoader produced a batch

    def on_call(self, ev: CallEvent) -> None: ...  # a GradScaler method, gradient clipping or torch.save is called

    # Model calls with gradients on made between windows (steps not sampled), handed over together when the next
    # window opens, before its first event (sooner when they hold much memory, or before an evaluation call, so
    # that calls arrive in the order they were made). Their tensors are as the model saw them: a call whose input
    # was changed in place since is left out (and from then on each call is handed over at once). For checks
    # that must see every training batch (a NaN in one, the rows trained on) without an event on every step.
    def on_fed(self, calls: list[FedCall]) -> None: ...

    def needs_fed(self) -> bool:
        """Whether ``on_fed`` is to be given the calls recorded since the last hand-over (asked once at each
        hand-over, so an answer may note what it has seen; when no check needs them, they are dropped unread)."""
        return True

    def skips_fed(self, module: nn.Module) -> bool:
        """After a hand-over that no check needed: whether this check can go without the later calls of ``module``
        whose loss the session read as a finite scalar, each the only model call before its backward() (a loop
        that reports its steps, ``Session.loop_step``, then leaves those calls unrecorded, and their batches are
        not held until the next window). Asked once per model until the next hand-over. False (the default):
        every call is recorded."""
        return False

    def on_error(self, error: BaseException) -> None: ...  # the watched code raised

    def on_end(self) -> None: ...  # the script or fit ended (judge what needs the whole run)


def sampled_only(handler: H) -> H:
    """Mark an event handler that does nothing on steps that are not sampled: the session then
    does not call it on those steps at all (a training step costs fewer calls)."""
    handler._sampled_only = True  # type: ignore[attr-defined]
    return handler


def sampled_and_next(handler: H) -> H:
    """Mark an event handler that acts on sampled steps and on the step after each (it compares a step with
    the one before): the session leaves it out of the other steps."""
    handler._sampled_only = True  # type: ignore[attr-defined]
    handler._and_next = True  # type: ignore[attr-defined]
    return handler


def sampled_and_evaluation(handler: H) -> H:
    """Mark an ``on_forward`` or ``on_loss`` handler that acts on sampled steps and, between them, only on calls
    made with gradients off (an evaluation pass, which falls between sampled steps): between windows the session
    calls it for those calls alone, and a training call costs it nothing."""
    handler._sampled_only = True  # type: ignore[attr-defined]
    handler._evaluation = True  # type: ignore[attr-defined]
    return handler


def sampled_and_repeated_calls(handler: H) -> H:
    """Mark an ``on_forward`` or ``on_backward`` handler that acts on sampled steps and the step after each, and
    between them on the second and later model calls with gradients on before a backward() (an evaluation pass or
    a rollout run with gradients on), and on the backward() that ends such a run. The session counts the calls
    (``Session.calls_since_backward``): a training step of one call and one backward() costs the handler nothing."""
    handler = sampled_and_next(handler)
    handler._repeated = True  # type: ignore[attr-defined]
    return handler


def sampled_and_first_step(handler: H) -> H:
    """Mark an ``on_step_pre`` or ``on_step`` handler that acts on sampled steps and the step after each, and between
    them on the first step of each optimizer (one made inside the loop steps once and is dropped);
    ``Session.previous_optimizer_steps`` says how many steps in a row the optimizer before it took."""
    handler = sampled_and_next(handler)
    handler._first_step = True  # type: ignore[attr-defined]
    return handler


def sampled_and_first_batch(handler: H) -> H:
    """Mark an ``on_batch`` handler that acts on sampled steps and the step after each, and between them on the
    first batch of each pass over a DataLoader (a new epoch's iterator)."""
    handler = sampled_and_next(handler)
    handler._first_batch = True  # type: ignore[attr-defined]
    return handler


def acts_every_step(check: type[Check], method: str) -> bool:
    return not getattr(getattr(check, method), "_sampled_only", False)


def acts_in_evaluation(check: type[Check], method: str) -> bool:
    """Whether the handler acts on every call made with gradients off (every-step handlers do too)."""
    return acts_every_step(check, method) or getattr(getattr(check, method), "_evaluation", False)


def acts_after_sampled(check: type[Check], method: str) -> bool:
    """Whether the handler acts on the step after a sampled one (every-step handlers do too)."""
    return acts_every_step(check, method) or getattr(getattr(check, method), "_and_next", False)


def acts_on_repeated_calls(check: type[Check], method: str) -> bool:
    """Whether a windowed handler also acts on repeated model calls between windows (``sampled_and_repeated_calls``)."""
    return not acts_every_step(check, method) and getattr(getattr(check, method), "_repeated", False)


def acts_on_first_batch(check: type[Check], method: str) -> bool:
    """Whether a windowed handler also acts on each pass's first batch between windows (``sampled_and_first_batch``)."""
    return not acts_every_step(check, method) and getattr(getattr(check, method), "_first_batch", False)


def acts_on_first_step(check: type[Check], method: str) -> bool:
    """Whether a windowed handler also acts on each optimizer's first step between windows (``sampled_and_first_step``)."""
    return not acts_every_step(check, method) and getattr(getattr(check, method), "_first_step", False)


CHECKS: Registry[type[Check]] = Registry("doctor check")


def register(cls: type[Check]) -> type[Check]:
    """Class decorator: add a check to the registry under its id."""
    for lang in ("en", "zh"):
        if lang not in cls.text:
            raise ValueError(f"check {cls.id} has no {lang} text")
        if PLACEHOLDER.search(cls.text[lang].listing):
            raise ValueError(f"check {cls.id}: its {lang} title has placeholders; give Text(general=...) "
                             "the title without them")
    CHECKS.register(cls.id, cls.summary)(cls)
    return cls
