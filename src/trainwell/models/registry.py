"""The model registry: every built-in model's name, summary and builder (``"module:function"``).

Nothing here imports torch, so a configuration's model name is checked before anything heavy loads.
A builder is called as ``builder(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int)``
and returns an ``nn.Module`` mapping a batch ``(B, *input_shape)`` to logits ``(B, num_classes)``;
text models also take ``vocab_size=``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trainwell._registry import Registry, unknown_name_message

MODELS: Registry[Callable[..., Any]] = Registry("model")

MODELS.register_lazy("mlp", "trainwell.models.mlp:mlp",
                     "multi-layer perceptron: hidden sizes, activation, dropout (any input, flattened)")
MODELS.register_lazy("cnn", "trainwell.models.cnn:cnn",
                     "conv blocks (channels, optional batch norm) + MLP head; flatten size inferred")
MODELS.register_lazy("lstm", "trainwell.models.rnn:lstm", task="text",
                     summary="text: embedding -> (bi)LSTM over packed sequences -> last / mean / max / attention / "
                             "last_max pooling")
MODELS.register_lazy("gru", "trainwell.models.rnn:gru", task="text",
                     summary="text: embedding -> (bi)GRU over packed sequences -> last / mean / max / attention / "
                             "last_max pooling")


def check_model(name: Any) -> list[str]:
    """Problems with ``model.name`` (a built-in name, or the user's ``package.module:Class``)."""
    if isinstance(name, str) and ":" not in name and name not in MODELS:
        return ["model.name: " + unknown_name_message("model", name, MODELS.names())
                + " Or give your own as package.module:Class."]
    return []
