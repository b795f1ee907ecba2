"""ArcFace: softmax over scaled cosines to learned class centres, with an additive angle margin.

For an embedding ``e`` of class ``y`` and centres ``W_j`` (all unit length), the logits are
``s * cos(theta_j)`` for the other classes and ``s * cos(theta_y + m)`` for its own class, so
the target must win by an angle ``m``. Numerically safe: ``sin`` is computed from a clamped
``1 - cos^2`` (finite gradients at theta = 0 and pi) and past ``theta = pi - m``, where
``cos(theta + m)`` would turn upward again, the target logit continues as ``cos(theta) - m sin(m)``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

_EPS = 1e-6  # keeps sqrt(1 - cos^2) differentiable where cos = +-1


class ArcFaceLoss(nn.Module):
    """Additive angular margin loss with ``num_classes`` learned centres in ``dim`` dimensions.

    Targets outside ``0..num_classes-1`` are identities the loss has no centre for (held-out
    identities of the open protocol, seen only in validation); their rows are scored against
    centres estimated from the batch itself (the mean embedding of each such identity), so the
    validation loss stays defined and comparable from epoch to epoch.

    >>> loss = ArcFaceLoss(dim=8, num_classes=3)
    >>> e = F.normalize(torch.randn(4, 8), dim=1)
    >>> float(loss(e, torch.tensor([0, 1, 2, 0]))) > 0
    True
    """

    def __init__(self, dim: int, num_classes: int, *, margin: float = 0.5, scale: float = 30.0) -> None:
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"ArcFace needs at least 2 classes, got {num_classes}")
        self.num_classes = num_classes
        self.margin = float(margin)
        self.scale = float(scale)
        self.centres = nn.Parameter(torch.empty(num_classes, dim))
        nn.init.xavier_uniform_(self.centres)
        self._cos_m, self._sin_m = math.cos(margin), math.sin(margin)
        self._limit = math.cos(math.pi - margin)  # cos(theta) below this: theta + m would pass pi

    def logits(self, embeddings: torch.Tensor, target: torch.Tensor,
               centres: torch.Tensor | None = None) -> torch.Tensor:
        """Scaled cosines (B, C) with the margin applied to each row's target column."""
        w = F.normalize(self.centres if centres is None else centres, dim=1)
        cos = F.normalize(embeddings, dim=1) @ w.t()  # (B, C)
        cos = cos.clamp(-1.0, 1.0)
        sin = torch.sqrt((1.0 - cos * cos).clamp(min=_EPS))
        with_margin = cos * self._cos_m - sin * self._sin_m  # cos(theta + m)
        with_margin = torch.where(cos > self._limit, with_margin, cos - self.margin * self._sin_m)
        one_hot = F.one_hot(target, cos.shape[1]).to(cos.dtype)  # (B, C)
        return self.scale * (one_hot * with_margin + (1.0 - one_hot) * cos)

    def forward(self, embeddings: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        known = (target >= 0) & (target < self.num_classes)
        if bool(known.all()):
            return F.cross_entropy(self.logits(embeddings, target), target)
        return self._batch_centres_loss(embeddings, target, known)

    def _batch_centres_loss(self, embeddings: torch.Tensor, target: torch.Tensor,
                            known: torch.Tensor) -> torch.Tensor:
        """The same loss, with centres of unknown identities taken from the batch (validation only)."""
        parts = []
        if bool(known.any()):
            parts.append(F.cross_entropy(self.logits(embeddings[known], target[known]), target[known],
                                         reduction="sum"))
        unknown = ~known
        e, t = embeddings[unknown], target[unknown]
        ids, local = torch.unique(t, return_inverse=True)
        if len(ids) >= 2:
            sums = torch.zeros(len(ids), e.shape[1], dtype=e.dtype, device=e.device).index_add_(0, local, e)
            parts.append(F.cross_entropy(self.logits(e, local, centres=sums), local, reduction="sum"))
        if not parts:  # a single unknown identity in the batch: nothing to tell apart
            return embeddings.sum() * 0.0
        return torch.stack(parts).sum() / len(target)

    def extra_repr(self) -> str:
        return f"classes={self.num_classes}, margin={self.margin}, scale={self.scale}"
