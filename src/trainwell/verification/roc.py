"""Verification figures from similarity scores: ROC AUC, TAR at a given FAR, the best threshold.

A pair is declared "same identity" when its cosine similarity is ``>= threshold``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def roc_auc(scores: np.ndarray, same: np.ndarray) -> float:
    """Area under the ROC curve: the probability that a random same pair scores above a random
    different pair (ties count half). Equals ``sklearn.metrics.roc_auc_score(same, scores)``."""
    scores = np.asarray(scores, dtype=np.float64)
    same = np.asarray(same, dtype=bool)
    n_pos, n_neg = int(same.sum()), int((~same).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("ROC AUC needs both same and different pairs")
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[order] = np.arange(1, len(scores) + 1)
    # Ties share their average rank (Mann-Whitney U).
    uniq, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    if len(uniq) < len(scores):
        sums = np.zeros(len(uniq))
        np.add.at(sums, inverse, ranks)
        ranks = (sums / counts)[inverse]
    return float((ranks[same].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def roc_curve(scores: np.ndarray, same: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(false accept rate, true accept rate, threshold) at every distinct score, from the
    strictest threshold (nothing accepted) to the loosest (everything accepted)."""
    scores = np.asarray(scores, dtype=np.float64)
    same = np.asarray(same, dtype=bool)
    thresholds = np.unique(scores)[::-1]  # descending
    pos_scores, neg_scores = np.sort(scores[same]), np.sort(scores[~same])
    accepted_pos = len(pos_scores) - np.searchsorted(pos_scores, thresholds, side="left")
    accepted_neg = len(neg_scores) - np.searchsorted(neg_scores, thresholds, side="left")
    far = np.concatenate([[0.0], accepted_neg / max(len(neg_scores), 1)])
    tar = np.concatenate([[0.0], accepted_pos / max(len(pos_scores), 1)])
    return far, tar, np.concatenate([[np.inf], thresholds])


def tar_at_far(scores: np.ndarray, same: np.ndarray, far: float = 0.01) -> float:
    """True accept rate at the loosest threshold whose false accept rate is still ``<= far``."""
    fars, tars, _ = roc_curve(scores, same)
    return float(tars[fars <= far + 1e-12].max())


def best_threshold(scores: np.ndarray, same: np.ndarray) -> tuple[float, float]:
    """(threshold, accuracy): the threshold with the highest accuracy on these pairs.

    Candidates are the midpoints between consecutive distinct scores, plus one below the
    lowest and one above the highest; on a tie the lowest such threshold wins.
    """
    scores = np.asarray(scores, dtype=np.float64)
    same = np.asarray(same, dtype=bool)
    uniq = np.unique(scores)
    candidates = np.concatenate([[uniq[0] - 1.0], (uniq[:-1] + uniq[1:]) / 2, [uniq[-1] + 1.0]])
    pos, neg = np.sort(scores[same]), np.sort(scores[~same])
    true_accepts = len(pos) - np.searchsorted(pos, candidates, side="left")  # same and >= t
    true_rejects = np.searchsorted(neg, candidates, side="left")  # different and < t
    accuracy = (true_accepts + true_rejects) / len(scores)
    best = int(np.argmax(accuracy))
    return float(candidates[best]), float(accuracy[best])


def accuracy_at(scores: np.ndarray, same: np.ndarray, threshold: float) -> float:
    """Fraction of pairs decided correctly with "same when score >= threshold"."""
    return float(np.mean((np.asarray(scores) >= threshold) == np.asarray(same, dtype=bool)))


def verification_scores(scores: np.ndarray, same: np.ndarray, threshold: float) -> dict[str, Any]:
    """AUC, TAR at FAR 1 % and accuracy at ``threshold`` for one set of pairs."""
    return {"auc": roc_auc(scores, same), "tar_at_far1": tar_at_far(scores, same, 0.01),
            "verify_accuracy": accuracy_at(scores, same, threshold)}
