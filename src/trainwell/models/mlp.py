"""``mlp``: the guide's first model — flatten, hidden Linear layers with activations, a classifier."""

from __future__ import annotations

import math

from torch import nn

from trainwell.config import ModelConfig
from trainwell.models.layers import Blocks, mlp_blocks


def mlp(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int) -> nn.Module:
    """Flatten -> hidden blocks (each checkpointed with ``model.checkpoint``) -> Linear to the classes.

    The layers are numbered as in a plain ``nn.Sequential`` (``1.weight`` is the first Linear)."""
    in_features = math.prod(input_shape)
    return Blocks(mlp_blocks(in_features, cfg.hidden, cfg.activation, cfg.dropout), before=[nn.Flatten()],
                  after=[nn.Linear(cfg.hidden[-1] if cfg.hidden else in_features, num_classes)],
                  checkpoint=cfg.checkpoint)
