"""The model registry: ``@MODELS.register(name, summary)`` on a builder.

A builder is called as ``builder(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int)``
and returns an ``nn.Module`` mapping a batch ``(B, *input_shape)`` to logits ``(B, num_classes)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trainwell._registry import Registry

MODELS: Registry[Callable[..., Any]] = Registry("model")
