"""``train.precision``: one small plugin per mode, on PyTorch's own ``torch.autocast`` and ``torch.amp.GradScaler``.

- ``32``: plain float32, nothing changes.
- ``bf16-mixed``: the forward and the loss run under ``torch.autocast(device, torch.bfloat16)``. bfloat16 has
  float32's range, so gradients need no scaling; the weights and the optimizer stay float32.
- ``16-mixed``: autocast to float16, whose range is small, so backward starts from a ``GradScaler``'s scale
  instead of 1 (the same gradients as scaling the loss, while the loss itself, which the doctor watches, stays
  true). Before the gradients are clipped or read by any callback they are unscaled; a step whose gradients
  hold inf/NaN is skipped by the scaler (and the scale lowered), counted per epoch as ``skipped_steps`` with the
  epoch's final ``loss_scale`` beside it. The scaler's state travels in checkpoints, so resume is exact.
  (``GradScaler.step`` reads whether any gradient overflowed: one wait for the device per step, PyTorch's own.)

The trainer, per optimizer step: ``autocast()`` around each micro-batch's forward and loss,
``backward(loss, weight)`` for each, ``unscale(optimizer)`` once, then clipping and the gradient callbacks,
then ``step(optimizer)``, which says whether the optimizer really stepped. ``epoch_values()`` is read once at
an epoch's end.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch

from trainwell._errors import ConfigError
from trainwell._registry import Registry


class Precision:
    """``32``: float32 throughout; the base class the mixed modes extend."""

    name = "32"
    dtype: torch.dtype | None = None  # what the forward computes in under autocast (None: float32, no autocast)

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.autocasting = True  # False where the strategy casts the model itself (FSDP's mixed-precision policy)

    def autocast(self) -> AbstractContextManager[object]:
        if self.dtype is None or not self.autocasting:
            return nullcontext()
        return torch.autocast(self.device.type, dtype=self.dtype)

    def backward(self, loss: torch.Tensor, weight: float | torch.Tensor | None = None) -> None:
        """Backward of ``weight * loss``. The weight (a micro-batch's share of its global batch) goes into the
        gradient handed to ``loss.backward``, not into the loss, so anything watching ``backward`` (the doctor)
        sees the micro-batch's own mean loss; the gradients are the same numbers."""
        if weight is None:
            loss.backward()
        else:
            loss.backward(gradient=_as_gradient(weight, loss))

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        """Bring the gradients to their true size (before clipping and before callbacks read them)."""

    def step(self, optimizer: torch.optim.Optimizer) -> bool:
        """Apply the gradients; ``False`` when the step was skipped."""
        optimizer.step()
        return True

    def epoch_values(self) -> dict[str, Any]:
        """Values for the epoch's row of metrics (read once per epoch), counters then start again."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


PRECISIONS: Registry[type[Precision]] = Registry("precision")
PRECISIONS.register("32", "float32 throughout")(Precision)


@PRECISIONS.register("bf16-mixed", "forward and loss in bfloat16 under torch.autocast; float32 weights")
class BF16Mixed(Precision):
    name = "bf16-mixed"
    dtype = torch.bfloat16

    def __init__(self, device: torch.device) -> None:
        super().__init__(device)
        if device.type == "cuda" and not _native_bf16(device):
            raise ConfigError(f"--precision bf16-mixed: the GPU {torch.cuda.get_device_name(device)} has no "
                              "bfloat16 support (it needs an Ampere GPU or newer).",
                              fix="use --precision 16-mixed on this GPU")


def _native_bf16(device: torch.device) -> bool:
    """Whether the run's GPU computes in bfloat16 itself (compute capability 8.0, Ampere, or newer; ROCm GPUs that
    torch supports do). ``torch.cuda.is_bf16_supported()`` asks about the current GPU, not the run's, and by
    default also says yes where bfloat16 is only emulated, many times slower."""
    if torch.version.hip:
        return bool(torch.cuda.is_bf16_supported())
    return torch.cuda.get_device_capability(device)[0] >= 8


@PRECISIONS.register("16-mixed", "forward and loss in float16 under torch.autocast, with a GradScaler")
class FP16Mixed(Precision):
    """``init_scale`` is GradScaler's (2**16); a test may start it absurdly high to force overflows."""

    name = "16-mixed"
    dtype = torch.float16

    def __init__(self, device: torch.device, init_scale: float = 2.0**16) -> None:
        super().__init__(device)
        self.scaler = torch.amp.GradScaler(device.type, init_scale=init_scale)
        self.skipped = 0  # steps skipped in the current epoch
        self._stepped = False

    def backward(self, loss: torch.Tensor, weight: float | torch.Tensor | None = None) -> None:
        # The scaler scales the gradient seed rather than the loss: the same numbers as scale(loss).backward().
        loss.backward(gradient=self.scaler.scale(_as_gradient(1.0 if weight is None else weight, loss)))

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> bool:
        # The scaler skips a step by not calling optimizer.step(): a post-hook tells, in place for this call only
        # (left on the optimizer, each plugin's hook would stay on it: the lr finder's, the batch search's ...).
        self._stepped = False
        handle = optimizer.register_step_post_hook(self._on_step)
        try:
            self.scaler.step(optimizer)
        finally:
            handle.remove()
        self.scaler.update()
        if not self._stepped:
            self.skipped += 1
        return self._stepped

    def _on_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        self._stepped = True

    def epoch_values(self) -> dict[str, Any]:
        values = {"skipped_steps": self.skipped, "loss_scale": self.scaler.get_scale()}
        self.skipped = 0
        return values

    def state_dict(self) -> dict[str, Any]:
        return {"scaler": self.scaler.state_dict(), "skipped": self.skipped}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])
        self.skipped = int(state.get("skipped", 0))


def _as_gradient(weight: float | torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
    if isinstance(weight, torch.Tensor):
        return weight.to(loss.device, loss.dtype).reshape(loss.shape)
    return torch.full_like(loss, weight)


def precision_plugin(precision: str | Precision, device: torch.device) -> Precision:
    """The plugin for a ``train.precision`` value (an instance is used as it is)."""
    if isinstance(precision, Precision):
        return precision
    return PRECISIONS.get(str(precision))(device)
