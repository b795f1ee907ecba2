"""``cnn``: conv blocks (conv -> [batch norm] -> activation -> max-pool), then an MLP head.

With ``model.checkpoint`` each conv block is activation-checkpointed (``models/layers.py``: ``Blocks``).

The flatten size is measured by running a dummy input through the conv part, so it
always follows the input size (the guide's classic ``32*8*8`` mistake cannot happen).
"""

from __future__ import annotations

import torch
from torch import nn

from trainwell._errors import TrainwellError
from trainwell.config import ModelConfig
from trainwell.models.layers import Blocks, activation, mlp_layers


class CNN(nn.Module):
    def __init__(self, input_shape: tuple[int, ...], num_classes: int, channels: list[int], *,
                 batch_norm: bool = True, hidden: list[int] | None = None, act: str = "relu",
                 dropout: float = 0.0, checkpoint: bool = False) -> None:
        super().__init__()
        if len(input_shape) != 3:
            raise TrainwellError(
                f"The cnn model needs images shaped (channels, height, width); this data gives {tuple(input_shape)}.",
                fix="use --model mlp for tabular data")
        self.features, flat = conv_features(input_shape, channels, batch_norm=batch_norm, act=act,
                                            checkpoint=checkpoint)
        hidden = hidden or []
        head: list[nn.Module] = [nn.Flatten()]
        if dropout > 0:
            head.append(nn.Dropout(dropout))
        head += mlp_layers(flat, hidden, act, 0.0)
        head.append(nn.Linear(hidden[-1] if hidden else flat, num_classes))
        self.classifier = nn.Sequential(*head)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))  # (B, C, H, W) -> (B, num_classes)


def conv_features(input_shape: tuple[int, ...], channels: list[int], *, batch_norm: bool = True,
                  act: str = "relu", checkpoint: bool = False) -> tuple[Blocks, int]:
    """The conv blocks of :class:`CNN` and their flattened output size (measured, never computed by hand).

    Shared by the classifier and the embedding model (``models/embedding.py``). The layers are numbered
    as in a plain ``nn.Sequential``; with ``checkpoint`` each conv block is activation-checkpointed.
    """
    blocks: list[list[nn.Module]] = []
    c, h, w = input_shape
    for width in channels:
        block: list[nn.Module] = [nn.Conv2d(c, width, 3, padding=1, bias=not batch_norm)]
        if batch_norm:
            block.append(nn.BatchNorm2d(width))
        block.append(activation(act))
        if min(h, w) >= 2:  # stop pooling once the feature map is a single pixel
            block.append(nn.MaxPool2d(2))
            h, w = h // 2, w // 2
        blocks.append(block)
        c = width
    features = Blocks(blocks, checkpoint=checkpoint)
    features.eval()  # measuring must not train: in training mode batch norm would update its statistics
    with torch.no_grad():
        flat = features(torch.zeros(1, *input_shape)).numel()
    features.train()
    return features, flat


def cnn(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int) -> nn.Module:
    return CNN(input_shape, num_classes, cfg.channels, batch_norm=cfg.batch_norm, hidden=cfg.hidden,
               act=cfg.activation, dropout=cfg.dropout, checkpoint=cfg.checkpoint)
