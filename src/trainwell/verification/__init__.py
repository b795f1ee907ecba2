"""Face-verification evaluation: same / different pairs, the decision threshold, ROC AUC and TAR at a FAR.

Used by the embedding task (``tasks/embedding.py``) and the ``verify`` command.
"""

from trainwell.verification.pairs import Pairs, make_pairs
from trainwell.verification.roc import best_threshold, roc_auc, tar_at_far, verification_scores

__all__ = ["Pairs", "best_threshold", "make_pairs", "roc_auc", "tar_at_far", "verification_scores"]
