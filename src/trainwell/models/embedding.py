"""The embedding model: a backbone -> linear -> L2-normalized vector (task ``embedding``).

With the built-in ``cnn`` the backbone is exactly the classifier's conv blocks
(:func:`~trainwell.models.cnn.conv_features`), without its classification head; with
``embedding.pool=avg`` its last feature map is averaged over height and width first, so the
embedding layer sees one value per channel. Any other
registered model (or ``package.module:Class``) is built with ``embedding.dim`` outputs and
its output is used as the pre-normalization embedding: a library model's (``timm:`` / ``torchvision:``) last
layer, the one on its pooled features, becomes the embedding layer.

With ``model.pretrained`` (``app/pretrained.py``) both take a classifier's weights under their own names
(:meth:`EmbeddingNet.pretrained_state`, :meth:`NormalizedOutput.pretrained_state`): the backbone's weights are
kept, the classifier's head is not used, and the embedding layer starts from PyTorch's random initialization (a
layer at zero would give every image the same, zero-length embedding).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from trainwell._errors import TrainwellError
from trainwell.config import EmbeddingConfig, ModelConfig
from trainwell.models.layers import Blocks


class EmbeddingNet(nn.Module):
    """``backbone(x)`` -> flatten -> [dropout] -> ``Linear(features, dim)`` -> L2 normalization.

    The output rows have unit length, so the dot product of two outputs is their cosine similarity.

    >>> net = EmbeddingNet(nn.Flatten(), 784, 128)
    >>> net(torch.zeros(2, 1, 28, 28)).shape
    torch.Size([2, 128])
    """

    def __init__(self, backbone: nn.Module, features: int, dim: int, *, dropout: float = 0.0) -> None:
        super().__init__()
        self.backbone = backbone
        head: list[nn.Module] = [nn.Flatten()]
        if dropout > 0:
            head.append(nn.Dropout(dropout))
        head.append(nn.Linear(features, dim))
        self.head = nn.Sequential(*head)
        self.dim = dim

    head_starts_at_zero = False  # a zero embedding layer maps every image to the same (zero) vector

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.head(self.backbone(x))  # (B, dim)
        return F.normalize(z, dim=1)  # (B, dim), unit rows

    def pretrained_state(self, state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``state`` under this model's names: an embedding run's as it is; a built-in cnn classifier's conv blocks
        (``features.*``) as the backbone, its classifier (``classifier.*``) left out."""
        if any(k.startswith(("backbone.", "head.")) for k in state):
            return state
        into = "backbone." if isinstance(self.backbone, Blocks) else "backbone.0."  # (avg pooling wraps the blocks)
        return {into + k.removeprefix("features."): v for k, v in state.items() if k.startswith("features.")}


class NormalizedOutput(nn.Module):
    """Any model with ``dim`` outputs, its output rows L2-normalized."""

    def __init__(self, model: nn.Module, dim: int) -> None:
        super().__init__()
        self.model = model
        self.dim = dim

    head_starts_at_zero = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.model(x).flatten(1), dim=1)

    def pretrained_state(self, state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``state`` under this model's names: an embedding run's as it is, a classifier's under ``model.``."""
        return state if any(k.startswith("model.") for k in state) else {f"model.{k}": v for k, v in state.items()}


def build_embedding_model(model_cfg: ModelConfig, emb_cfg: EmbeddingConfig,
                          input_shape: tuple[int, ...]) -> nn.Module:
    """The embedding network for inputs of ``input_shape`` (one sample), with ``emb_cfg.dim`` outputs."""
    if model_cfg.name == "cnn":
        from trainwell.models.cnn import conv_features

        if len(input_shape) != 3:
            raise TrainwellError(
                f"The embedding task needs images shaped (channels, height, width); this data gives "
                f"{tuple(input_shape)}.", fix="use image data: --data mnist-5k, image-folder:DIR, lfw or olivetti-faces")
        backbone, flat = conv_features(tuple(input_shape), model_cfg.channels, batch_norm=model_cfg.batch_norm,
                                       act=model_cfg.activation, checkpoint=model_cfg.checkpoint)
        if emb_cfg.pool == "avg":  # one value per channel: (B, C, H, W) -> (B, C, 1, 1)
            backbone = nn.Sequential(backbone, nn.AdaptiveAvgPool2d(1))
            flat = model_cfg.channels[-1] if model_cfg.channels else input_shape[0]
        return EmbeddingNet(backbone, flat, emb_cfg.dim, dropout=model_cfg.dropout)
    if emb_cfg.pool != "flatten":
        raise TrainwellError(f"embedding.pool={emb_cfg.pool} applies to the built-in cnn only; model {model_cfg.name!r} "
                             "gives its own output as the embedding.", fix="drop embedding.pool, or use --set model.name=cnn")
    from trainwell._library_names import is_library_model

    if is_library_model(model_cfg.name):  # its head, on the pooled features, gives the embedding
        from trainwell.models.library import build_library_model

        return NormalizedOutput(build_library_model(model_cfg.name, tuple(input_shape), emb_cfg.dim,
                                                    published=model_cfg.pretrained is True, zero_head=False),
                                emb_cfg.dim)
    from trainwell.models import build_model

    return NormalizedOutput(build_model(model_cfg, tuple(input_shape), emb_cfg.dim), emb_cfg.dim)
