"""Triplet loss with batch-hard mining: for each anchor, its farthest positive and nearest negative.

``loss = mean over anchors of max(0, d(a, hardest p) - d(a, hardest n) + margin)`` with Euclidean
distances between embeddings. Anchors whose identity has no other sample in the batch, or a
batch with a single identity, contribute nothing (random batches of 64 over 10 digits always
have positives; for sets with many identities see docs/EMBEDDING.md).
"""

from __future__ import annotations

import torch
from torch import nn

_EPS = 1e-12  # keeps sqrt differentiable at distance 0 (an anchor with itself, duplicates)


def pairwise_distances(e: torch.Tensor) -> torch.Tensor:
    """Euclidean distances (B, B) between the rows of ``e`` (B, D), with finite gradients at 0."""
    sq = (e * e).sum(dim=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (e @ e.t())
    return torch.sqrt(d2.clamp(min=_EPS))


def hardest(distances: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per anchor: the hardest positive distance, the hardest negative distance, and whether both exist."""
    same = target[:, None] == target[None, :]  # (B, B)
    self_mask = torch.eye(len(target), dtype=torch.bool, device=target.device)
    positive = same & ~self_mask
    negative = ~same
    neg_inf = torch.finfo(distances.dtype).min
    pos_inf = torch.finfo(distances.dtype).max
    hard_pos = distances.masked_fill(~positive, neg_inf).max(dim=1).values
    hard_neg = distances.masked_fill(~negative, pos_inf).min(dim=1).values
    valid = positive.any(dim=1) & negative.any(dim=1)
    return hard_pos, hard_neg, valid


class BatchHardTripletLoss(nn.Module):
    """Batch-hard triplet loss on (B, D) embeddings with integer identity labels (B,).

    >>> e = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> float(BatchHardTripletLoss(margin=0.1)(e, torch.tensor([0, 0, 1, 1])))
    0.0
    """

    def __init__(self, margin: float = 0.3) -> None:
        super().__init__()
        self.margin = float(margin)

    def forward(self, embeddings: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        hard_pos, hard_neg, valid = hardest(pairwise_distances(embeddings), target)
        if not bool(valid.any()):
            return embeddings.sum() * 0.0  # no triplet in this batch: a zero that keeps the graph
        losses = torch.relu(hard_pos - hard_neg + self.margin)
        return losses[valid].mean()

    def extra_repr(self) -> str:
        return f"margin={self.margin}"
