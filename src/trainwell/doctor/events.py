"""What the doctor's hooks observe, handed to every check.

``where`` (the user's line, ``"train.py:23"``) is found when a check first asks for it, not when the
event is made: most events never need it, and finding it walks the stack. The session gives each event
the frame of the call it reports instead of the text; the frame is asked during the dispatch, while the
user's line is still the one running. A string (or None) can be given directly (tests do).
"""

from __future__ import annotations

from types import FrameType
from typing import Any

import torch
from torch import nn

from trainwell.doctor.where import where as _where_of


class _Located:
    """An event with a ``where``, found on first use when the event was given a frame."""

    __slots__ = ("_where",)  # the text, None, or the frame to find it from

    @property
    def where(self) -> str | None:
        w = self._where
        if type(w) is FrameType:
            try:
                w = _where_of(w)
            except Exception:  # noqa: BLE001 - the location is a nicety, never a reason to fail
                w = None
            self._where = w
        return w

    @where.setter
    def where(self, value: str | None) -> None:
        self._where = value

    @property
    def site(self) -> Any:
        """A cheap key for the place that made the call (the calling frame's code and instruction: a frame's
        line number is worked out from its code's line table each time it is read), for checks that tell call
        sites apart; ``where`` is the user's line, found by walking the stack."""
        w = self._where
        if type(w) is FrameType:
            return (id(w.f_code), w.f_lasti)
        return w

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in (*self.__slots__, "where") if k != "_where")
        return f"{type(self).__name__}({fields})"


class ForwardEvent(_Located):
    """A top-level model call (not a call nested inside another module's forward)."""

    __slots__ = ("module", "inputs", "output", "grad_enabled", "leaf_calls", "functional_relus")

    def __init__(self, module: nn.Module, inputs: tuple[Any, ...], output: Any, grad_enabled: bool,
                 where: str | FrameType | None, leaf_calls: list[tuple[nn.Module, Any, Any]] | None = None,
                 functional_relus: list[Any] | None = None) -> None:
        self.module = module
        self.inputs = inputs
        self.output = output
        self.grad_enabled = grad_enabled
        self._where = where
        self.leaf_calls = leaf_calls if leaf_calls is not None else []  # (module, input, output) in order
        # The output of each ReLU called as a function (F.relu / torch.relu, once each; an nn.ReLU's is in leaf_calls).
        self.functional_relus = functional_relus if functional_relus is not None else []


class LossEvent(_Located):
    __slots__ = ("name", "input", "target", "output", "kwargs")

    def __init__(self, name: str, input: Any, target: Any, output: torch.Tensor, kwargs: dict[str, Any],
                 where: str | FrameType | None) -> None:
        self.name = name  # "cross_entropy", "nll_loss", "mse_loss", ...
        self.input = input
        self.target = target
        self.output = output
        self.kwargs = kwargs
        self._where = where


class BackwardEvent(_Located):
    __slots__ = ("tensor",)

    def __init__(self, tensor: torch.Tensor, where: str | FrameType | None) -> None:
        self.tensor = tensor
        self._where = where


class ZeroGradEvent(_Located):
    __slots__ = ("owner",)

    def __init__(self, owner: Any, where: str | FrameType | None) -> None:
        self.owner = owner  # the optimizer or module whose zero_grad was called
        self._where = where


class StepEvent(_Located):
    __slots__ = ("optimizer", "grad_norms")

    def __init__(self, optimizer: torch.optim.Optimizer, where: str | FrameType | None) -> None:
        self.optimizer = optimizer
        self._where = where
        # id(parameter) -> its gradient's norm, for the parameters of ``optimizer`` that have a gradient: worked out
        # once for the checks that read it (``checks._grads.step_grad_norms``), None until one asks.
        self.grad_norms: dict[int, float] | None = None


class BatchEvent(_Located):
    __slots__ = ("batch", "wait_seconds", "iterator")

    def __init__(self, batch: Any, wait_seconds: float, where: str | FrameType | None, iterator: Any = None) -> None:
        self.batch = batch
        self.wait_seconds = wait_seconds  # time the loop waited for this batch
        self._where = where
        self.iterator = iterator  # the DataLoader iterator that produced it


class CallEvent(_Located):
    """A watched library call is about to run (see ``doctor/calls.py``): a GradScaler's ``scale`` / ``unscale_`` /
    ``step`` / ``update``, gradient clipping, ``torch.save``."""

    __slots__ = ("name", "owner", "args", "kwargs")

    def __init__(self, name: str, owner: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                 where: str | FrameType | None) -> None:
        self.name = name  # "scaler.scale", "scaler.unscale_", "scaler.step", "scaler.update", "clip_grad", "torch.save"
        self.owner = owner  # the GradScaler for its methods, else None
        self.args = args
        self.kwargs = kwargs
        self._where = where


class FedCall:
    """A top-level call with gradients on of a model (a module with parameters), made between windows and recorded
    without an event (see ``Check.on_fed``): the module, its positional inputs and the DataLoader batch it was
    given (the id of the batch's dataset when a batch was fetched since the model call before it, else None)."""

    __slots__ = ("module", "inputs", "batch")

    def __init__(self, module: nn.Module, inputs: tuple[Any, ...], batch: int | None) -> None:
        self.module = module
        self.inputs = inputs
        self.batch = batch

    def __repr__(self) -> str:
        return f"FedCall(module={type(self.module).__name__}, inputs={len(self.inputs)}, batch={self.batch})"


def batch_items(batch: Any) -> int:
    """Items in a batch: the first dimension of its first tensor (0: none found)."""
    if isinstance(batch, torch.Tensor):
        return int(batch.size(0)) if batch.dim() else 1  # (size(), not shape: a nested tensor has no shape)
    if isinstance(batch, (tuple, list)):
        for x in batch:
            n = batch_items(x)
            if n:
                return n
    if isinstance(batch, dict):
        for x in batch.values():
            n = batch_items(x)
            if n:
                return n
    return 0
