"""``train.ema``: an exponential moving average of the weights, used for validation, test and checkpoints.

After every optimizer step the shadow weights move towards the trained ones:
``shadow = d * shadow + (1 - d) * weights`` with ``d = min(train.ema, (1 + step) / (10 + step))``
(the warm-up lets the average forget the random initialisation quickly). Validation runs on the shadow
weights, and every checkpoint stores them as ``model`` (so ``best.pt``, the test figures and
``trainwell predict`` use them unchanged) and the trained weights as ``train_model`` (so ``--resume``
continues training, and the average, exactly where it stopped).
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.engine.trainer import Trainer


class EmaTrainer(Trainer):
    """A :class:`Trainer` that keeps a moving average of ``model``'s state (``ema`` = the per-step decay)."""

    def __init__(self, *args: Any, ema: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not 0 < ema < 1:
            raise ValueError(f"ema decay must be in (0, 1), got {ema}")
        self.ema = ema
        self.shadow = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        # The model's tensors, looked up once: state_dict() builds a new dict, too slow for every step.
        # (load_state_dict copies into these same tensors, so the pairs stay valid after a resume.)
        self._pairs = [(value, self.shadow[name]) for name, value in self.model.state_dict().items()]

    def update_shadow(self) -> None:
        """One averaging step (floating tensors; integer buffers such as batch counts are copied)."""
        d = min(self.ema, (1 + self.state.step) / (10 + self.state.step))
        with torch.no_grad():
            for value, avg in self._pairs:
                if avg.is_floating_point():
                    avg.lerp_(value.detach(), 1 - d)
                else:
                    avg.copy_(value)

    def swap(self) -> None:
        """Exchange the model's weights and the shadow weights (in place, so the optimizer keeps its tensors)."""
        with torch.no_grad():
            for value, avg in self._pairs:
                held = value.detach().clone()
                value.copy_(avg)
                avg.copy_(held)

    def _call(self, hook: str, *args: Any) -> None:
        if hook == "on_train_batch_end":
            self.update_shadow()  # before any callback saves a mid-epoch checkpoint
        super()._call(hook, *args)

    def _end_epoch(self) -> dict[str, Any]:
        self.swap()  # validate the averaged weights
        try:
            return super()._end_epoch()
        finally:
            self.swap()

    def state_dict(self) -> dict[str, Any]:
        ckpt = super().state_dict()
        ckpt["train_model"] = ckpt["model"]
        ckpt["model"] = {k: v.clone() for k, v in self.shadow.items()}
        ckpt["ema"] = self.ema
        return ckpt

    def load_state_dict(self, ckpt: dict[str, Any]) -> None:
        if "train_model" not in ckpt:  # a checkpoint saved without ema: start the average here
            super().load_state_dict(ckpt)
            with torch.no_grad():
                for value, avg in self._pairs:
                    avg.copy_(value)
            return
        super().load_state_dict({**ckpt, "model": ckpt["train_model"]})
        with torch.no_grad():
            for name, value in ckpt["model"].items():
                self.shadow[name].copy_(value)
