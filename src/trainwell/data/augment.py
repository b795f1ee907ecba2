"""Batch-level augmentation on raw-scaled images, with explicit randomness (resumable).

The randomness comes from a :class:`Draws`: ``rand(*shape)`` gives one row of uniform numbers per image. The
trainer passes draws that follow the sample (``trainwell.engine.seed.EpochDraws``: a function of seed, epoch and
the sample's index), so an image is augmented the same whatever batch, micro-batch or process it is in. A plain
``torch.Generator`` works too: its numbers then depend on the batch.
"""

from __future__ import annotations

import math
from typing import Protocol

import torch
import torch.nn.functional as F


class Draws(Protocol):
    def rand(self, *shape: int) -> torch.Tensor:
        """Uniform numbers in [0, 1) of shape (batch, *shape): one row per image, in batch order."""


class GeneratorDraws:
    """Draws for a batch of ``size`` images from one generator, in call order."""

    def __init__(self, generator: torch.Generator, size: int) -> None:
        self.generator = generator
        self.size = size

    def rand(self, *shape: int) -> torch.Tensor:
        return torch.rand(self.size, *shape, generator=self.generator)


def _draws(source: Draws | torch.Generator, size: int) -> Draws:
    return GeneratorDraws(source, size) if isinstance(source, torch.Generator) else source


def random_shift(x: torch.Tensor, pixels: int, rng: Draws | torch.Generator) -> torch.Tensor:
    """Move each image (B, C, H, W) by up to ``pixels`` in x and y, filling with zeros."""
    if pixels <= 0:
        return x
    b, c, h, w = x.shape
    draws = _draws(rng, b)
    padded = F.pad(x, (pixels, pixels, pixels, pixels))  # (B, C, H+2p, W+2p)
    dy = (draws.rand() * (2 * pixels + 1)).long().clamp_(max=2 * pixels).to(x.device)
    dx = (draws.rand() * (2 * pixels + 1)).long().clamp_(max=2 * pixels).to(x.device)
    rows = (dy[:, None] + torch.arange(h, device=x.device))[:, None, :, None]  # (B, 1, H, 1)
    cols = (dx[:, None] + torch.arange(w, device=x.device))[:, None, None, :]  # (B, 1, 1, W)
    batch = torch.arange(b, device=x.device)[:, None, None, None]
    chans = torch.arange(c, device=x.device)[None, :, None, None]
    return padded[batch, chans, rows, cols]  # (B, C, H, W)


def random_affine(x: torch.Tensor, degrees: float, scale: float, pixels: int,
                  rng: Draws | torch.Generator) -> torch.Tensor:
    """Rotate by up to ``degrees``, zoom by up to ``scale`` (fraction) and move by up to ``pixels``."""
    b, _, h, w = x.shape
    draws = _draws(rng, b)
    angle = (draws.rand() * 2 - 1) * math.radians(degrees)
    zoom = 1 + (draws.rand() * 2 - 1) * scale
    move = (draws.rand(2) * 2 - 1) * pixels
    cos, sin = torch.cos(angle) / zoom, torch.sin(angle) / zoom
    theta = torch.stack([
        torch.stack([cos, -sin, move[:, 0] * 2 / w], dim=1),
        torch.stack([sin, cos, move[:, 1] * 2 / h], dim=1),
    ], dim=1).to(x.device, x.dtype)  # (B, 2, 3): output pixel -> input pixel, in [-1, 1] coordinates
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def random_flip(x: torch.Tensor, rng: Draws | torch.Generator) -> torch.Tensor:
    """Mirror a random half of the images left-right."""
    flip = (_draws(rng, x.shape[0]).rand() < 0.5).to(x.device)
    return torch.where(flip[:, None, None, None], x.flip(-1), x)


class Augment:
    """The ``data.augment`` option on whole batches: ``shift``, ``affine``, ``flip``, ``shift+flip``,
    ``affine+flip``; ``none`` and ``photo`` (done per image by the loader, ``trainwell.data.photo``) do nothing
    here."""

    def __init__(self, kind: str, shift: int, degrees: float = 10.0, scale: float = 0.1) -> None:
        self.kind = kind
        self.shift = shift
        self.degrees = degrees
        self.scale = scale

    @property
    def active(self) -> bool:
        return self.kind not in ("none", "photo", "auto")

    def __call__(self, x: torch.Tensor, rng: Draws | torch.Generator) -> torch.Tensor:
        draws = _draws(rng, x.shape[0])  # one source for every step, so a generator is used in order
        if "shift" in self.kind:
            x = random_shift(x, self.shift, draws)
        elif "affine" in self.kind:
            x = random_affine(x, self.degrees, self.scale, self.shift, draws)
        if "flip" in self.kind:
            x = random_flip(x, draws)
        return x
