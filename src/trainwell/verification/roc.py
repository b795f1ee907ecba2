"""Verification figures from similarity scores: ROC AUC, TAR at a given FAR, the best threshold.

A pair is declared "same identity" when its cosine similarity is ``>= threshold``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def roc_auc(scores: np.ndarray, same: np.ndarray) -> float:
    """Area under the ROC curve: the probability that a random same pair scores above a random
    different pair (ties count half), by scikit-learn's ``roc_auc_score``."""
    from sklearn.metrics import roc_auc_score

    same = np.asarray(same, dtype=bool)
    if same.all() or not same.any():
        raise ValueError("ROC AUC needs both same and different pairs")
    return float(roc_auc_score(same, np.asarray(scores, dtype=np.float64)))


def roc_curve(scores: np.ndarray, same: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(false accept rate, true accept rate, threshold) at every distinct score, from the strictest
    threshold (nothing accepted) to the loosest (everything accepted): scikit-learn's ``roc_curve``,
    keeping every point (TAR at a FAR reads between the corners it would drop)."""
    from sklearn.metrics import roc_curve as sk_roc_curve

    far, tar, thresholds = sk_roc_curve(np.asarray(same, dtype=bool), np.asarray(scores, dtype=np.float64),
                                        drop_intermediate=False)
    return far, tar, thresholds


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
