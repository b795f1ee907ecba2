"""Models: a registry of builders (``mlp``, ``cnn``) plus users' own ``package.module:Class``."""

from __future__ import annotations

from torch import nn

from trainwell.config import ModelConfig
from trainwell.models.registry import MODELS

from trainwell.models import cnn, mlp, rnn  # noqa: E402,F401  (register the built-ins)


def build_model(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int) -> nn.Module:
    """The model named by ``cfg.name`` for inputs of ``input_shape`` and ``num_classes`` outputs."""
    if ":" in cfg.name:
        from trainwell.models.custom import load_user_model

        return load_user_model(cfg.name, input_shape, num_classes, cfg.kwargs)
    return MODELS.get(cfg.name)(cfg, tuple(input_shape), num_classes)


__all__ = ["MODELS", "build_model"]
