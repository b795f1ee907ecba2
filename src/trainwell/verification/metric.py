"""The per-epoch validation metric of the embedding task: verification ROC AUC on balanced pairs.

It collects the (already L2-normalized) embeddings of a whole split, builds the same pairs
every epoch (seeded from the split seed) and reports ``auc`` and ``tar_at_far1``, which appear
as ``val_auc`` / ``val_tar_at_far1`` in the history and ``test_auc`` / ``test_tar_at_far1`` in the summary.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import torch

from trainwell.verification.pairs import make_pairs
from trainwell.verification.roc import roc_auc, tar_at_far


def pair_scores(embeddings: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cosine similarity of each pair (rows are normalized here, so any embedding works)."""
    e = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
    return np.einsum("ij,ij->i", e[left], e[right])


class VerificationMetric:
    """``update(embeddings, identity labels)`` per batch; ``compute()`` -> auc and tar_at_far1."""

    def __init__(self, pairs: int, seed: int) -> None:
        self.pairs = pairs
        self.seed = seed
        self.embeddings: list[torch.Tensor] = []
        self.labels: list[torch.Tensor] = []

    def update(self, output: Any, target: Any) -> None:
        self.embeddings.append(output.detach().float().cpu())
        self.labels.append(target.detach().cpu())

    def combine(self, strategy: Any) -> None:
        """Every process's embeddings, in the split's order: each evaluation batch was split among the processes
        in rank order, and only the last batch can leave a process without samples."""
        everyone = strategy.gather((self.embeddings, self.labels))
        self.embeddings, self.labels = [], []
        for b in range(max(len(e) for e, _ in everyone)):
            for embeddings, labels in everyone:
                if b < len(embeddings):
                    self.embeddings.append(embeddings[b])
                    self.labels.append(labels[b])

    def compute(self) -> dict[str, float]:
        if not self.embeddings:
            return {}
        e = torch.cat(self.embeddings).numpy()
        y = torch.cat(self.labels).numpy()
        p = make_pairs(y, self.pairs, self.seed)
        s = pair_scores(e, p.left, p.right)
        return {"auc": roc_auc(s, p.same), "tar_at_far1": tar_at_far(s, p.same, 0.01)}

    def direction(self, name: str) -> Literal["min", "max"] | None:
        return "max" if name == "auc" or name.startswith("tar_") else None
