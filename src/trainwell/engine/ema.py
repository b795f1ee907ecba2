"""``train.ema``: an exponential moving average of the weights, used for validation, test and checkpoints.

After every optimizer step the average moves towards the trained weights:
``average = d * average + (1 - d) * weights`` with ``d = min(train.ema, (1 + step) / (10 + step))``
(the warm-up lets the average forget the random initialisation quickly). Validation runs on the averaged
weights, and every checkpoint stores them as ``model`` (so ``best.pt``, the test figures and
``trainwell predict`` use them unchanged) and the trained weights as ``train_model`` (so ``--resume``
continues training, and the average, exactly where it stopped).

The average pairs each distinct tensor of the model once: weights shared by several modules (tied
embeddings) appear under several names in ``state_dict`` but have one average, so swapping in the
average and back restores every trained weight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from trainwell.engine.callbacks import Callback

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer


class Ema(Callback):
    """Keeps a moving average of the trainer's model (``decay`` per step) and validates on it."""

    def __init__(self, decay: float) -> None:
        if not 0 < decay < 1:
            raise ValueError(f"ema decay must be in (0, 1), got {decay}")
        self.decay = decay
        self.shadow: dict[str, torch.Tensor] = {}  # name -> average; tied names share one tensor
        self._pairs: list[tuple[torch.Tensor, torch.Tensor]] = []  # (model tensor, its average), each once
        self._model: nn.Module | None = None

    def swap(self, trainer: Trainer) -> None:
        """Exchange the model's weights and the averaged ones (in place, so the optimizer keeps its tensors)."""
        self._attach(trainer.model)
        with torch.no_grad():
            for value, avg in self._pairs:
                held = value.clone()
                value.copy_(avg)
                avg.copy_(held)

    def on_fit_start(self, trainer: Trainer) -> None:
        if trainer.strategy.shards_model:
            from trainwell._errors import ConfigError

            raise ConfigError("train.ema averages whole weights, which no process holds under the fsdp strategy.",
                              fix="use --strategy ddp with train.ema, or leave train.ema unset")
        self._attach(trainer.model)

    def on_after_optimizer_step(self, trainer: Trainer) -> None:
        """One averaging step (floating tensors; integer buffers such as batch counts are copied)."""
        step = trainer.state.step
        d = min(self.decay, (1 + step) / (10 + step))
        with torch.no_grad():
            for value, avg in self._pairs:
                if avg.is_floating_point():
                    avg.lerp_(value, 1 - d)
                else:
                    avg.copy_(value)

    def on_validation_start(self, trainer: Trainer) -> None:
        self.swap(trainer)

    def on_validation_end(self, trainer: Trainer) -> None:
        self.swap(trainer)

    def on_save_checkpoint(self, trainer: Trainer, checkpoint: dict[str, Any]) -> None:
        self._attach(trainer.model)
        copies: dict[int, torch.Tensor] = {}
        averaged = {}
        for name, avg in self.shadow.items():
            if id(avg) not in copies:
                copies[id(avg)] = avg.clone()
            averaged[name] = copies[id(avg)]
        checkpoint["train_model"] = checkpoint["model"]
        checkpoint["model"] = averaged
        checkpoint["ema"] = self.decay

    def on_load_checkpoint(self, trainer: Trainer, checkpoint: dict[str, Any]) -> None:
        """The trainer loaded ``model``: the average (or, from a run without ema, the weights, where the
        average starts); the trained weights come from ``train_model``."""
        self._attach(trainer.model)
        with torch.no_grad():
            for value, avg in self._pairs:
                avg.copy_(value)
        if "train_model" in checkpoint:
            trainer.model.load_state_dict(checkpoint["train_model"])

    def _attach(self, model: nn.Module) -> None:
        """Start the average at ``model``'s current weights, once per model."""
        if self._model is model:
            return
        self.shadow, self._pairs = {}, []
        by_memory: dict[tuple[Any, ...], torch.Tensor] = {}
        for name, value in model.state_dict(keep_vars=True).items():
            value = value.detach()
            key = (value.device, value.data_ptr(), value.dtype, tuple(value.shape), value.stride())
            if key not in by_memory or value.numel() == 0:
                by_memory[key] = value.clone()
                self._pairs.append((value, by_memory[key]))
            self.shadow[name] = by_memory[key]
        self._model = model
