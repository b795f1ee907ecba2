"""Batch-level augmentation on raw-scaled images, driven by an explicit generator (resumable)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def random_shift(x: torch.Tensor, pixels: int, g: torch.Generator) -> torch.Tensor:
    """Move each image (B, C, H, W) by up to ``pixels`` in x and y, filling with zeros."""
    if pixels <= 0:
        return x
    b, c, h, w = x.shape
    padded = F.pad(x, (pixels, pixels, pixels, pixels))  # (B, C, H+2p, W+2p)
    dy = torch.randint(0, 2 * pixels + 1, (b,), generator=g).to(x.device)
    dx = torch.randint(0, 2 * pixels + 1, (b,), generator=g).to(x.device)
    rows = (dy[:, None] + torch.arange(h, device=x.device))[:, None, :, None]  # (B, 1, H, 1)
    cols = (dx[:, None] + torch.arange(w, device=x.device))[:, None, None, :]  # (B, 1, 1, W)
    batch = torch.arange(b, device=x.device)[:, None, None, None]
    chans = torch.arange(c, device=x.device)[None, :, None, None]
    return padded[batch, chans, rows, cols]  # (B, C, H, W)


def random_affine(x: torch.Tensor, degrees: float, scale: float, pixels: int, g: torch.Generator) -> torch.Tensor:
    """Rotate by up to ``degrees``, zoom by up to ``scale`` (fraction) and move by up to ``pixels``."""
    b, _, h, w = x.shape
    angle = (torch.rand(b, generator=g) * 2 - 1) * math.radians(degrees)
    zoom = 1 + (torch.rand(b, generator=g) * 2 - 1) * scale
    move = (torch.rand(b, 2, generator=g) * 2 - 1) * pixels
    cos, sin = torch.cos(angle) / zoom, torch.sin(angle) / zoom
    theta = torch.stack([
        torch.stack([cos, -sin, move[:, 0] * 2 / w], dim=1),
        torch.stack([sin, cos, move[:, 1] * 2 / h], dim=1),
    ], dim=1).to(x.device, x.dtype)  # (B, 2, 3): output pixel -> input pixel, in [-1, 1] coordinates
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def random_flip(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Mirror a random half of the images left-right."""
    flip = (torch.rand(x.shape[0], generator=g) < 0.5).to(x.device)
    return torch.where(flip[:, None, None, None], x.flip(-1), x)


class Augment:
    """The ``data.augment`` option: ``none``, ``shift``, ``affine``, ``flip``, ``shift+flip``, ``affine+flip``."""

    def __init__(self, kind: str, shift: int, degrees: float = 10.0, scale: float = 0.1) -> None:
        self.kind = kind
        self.shift = shift
        self.degrees = degrees
        self.scale = scale

    @property
    def active(self) -> bool:
        return self.kind != "none"

    def __call__(self, x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        if "shift" in self.kind:
            x = random_shift(x, self.shift, g)
        elif "affine" in self.kind:
            x = random_affine(x, self.degrees, self.scale, self.shift, g)
        if "flip" in self.kind:
            x = random_flip(x, g)
        return x
