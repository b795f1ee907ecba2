"""``mlp``: the guide's first model — flatten, hidden Linear layers with activations, a classifier."""

from __future__ import annotations

import math

from torch import nn

from trainwell.config import ModelConfig
from trainwell.models.layers import mlp_layers


def mlp(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int) -> nn.Module:
    in_features = math.prod(input_shape)
    return nn.Sequential(
        nn.Flatten(),
        *mlp_layers(in_features, cfg.hidden, cfg.activation, cfg.dropout),
        nn.Linear(cfg.hidden[-1] if cfg.hidden else in_features, num_classes),
    )
