"""Models: a registry of builders (``mlp``, ``cnn``, ``lstm``, ``gru``), the image libraries' models by name
(``torchvision:NAME``, ``timm:NAME``) and users' own ``package.module:Class``.

Importing this package is cheap; building a model imports torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainwell._library_names import is_library_model
from trainwell.models.registry import MODELS

if TYPE_CHECKING:
    from torch import nn

    from trainwell.config import ModelConfig


def build_model(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int) -> nn.Module:
    """The model named by ``cfg.name`` for inputs of ``input_shape`` and ``num_classes`` outputs."""
    if is_library_model(cfg.name):
        from trainwell.models.library import build_library_model

        return build_library_model(cfg.name, tuple(input_shape), num_classes, published=cfg.pretrained is True)
    if ":" in cfg.name:
        from trainwell.models.custom import load_user_model

        return load_user_model(cfg.name, input_shape, num_classes, cfg.kwargs)
    return MODELS.get(cfg.name)(cfg, tuple(input_shape), num_classes)


__all__ = ["MODELS", "build_model"]
