"""After training: embed the validation and test splits, choose the threshold on validation pairs,
measure the test pairs, and the same for raw pixels (the baseline), in one pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from trainwell.verification.metric import pair_scores
from trainwell.verification.pairs import Pairs, make_pairs
from trainwell.verification.roc import best_threshold, roc_curve, verification_scores

EVAL_BATCH = 256


@dataclass
class Embedded:
    """One split as embeddings, raw (normalized) pixels and identity labels."""

    embeddings: np.ndarray  # (N, dim)
    pixels: np.ndarray  # (N, C*H*W), preprocessed exactly like the model input
    labels: np.ndarray  # (N,)


@dataclass
class Verification:
    """The figures of one method (embedding or pixels) and its test ROC curve."""

    figures: dict[str, Any]
    curve: tuple[np.ndarray, np.ndarray] = field(repr=False)


def embed_split(model: nn.Module, dataset: Any, transform: Any, device: torch.device) -> Embedded:
    """Embed a whole split in eval mode without autograd; the model's mode is restored after."""
    from trainwell.data.loading import EpochLoader

    loader = EpochLoader(dataset, batch_size=EVAL_BATCH, shuffle=False, seed=0)
    was_training = model.training
    model.eval()
    embs, pixels, labels = [], [], []
    with torch.inference_mode():
        for x, y in loader:
            x = x.to(device)
            x = transform(x, None) if transform is not None else x
            embs.append(model(x).float().cpu())
            pixels.append(x.flatten(1).float().cpu())
            labels.append(torch.as_tensor(y).cpu())
    model.train(was_training)
    return Embedded(torch.cat(embs).numpy(), torch.cat(pixels).numpy(), torch.cat(labels).numpy())


def verify_method(val: np.ndarray, val_pairs: Pairs, test: np.ndarray, test_pairs: Pairs) -> Verification:
    """Threshold from validation pairs (max accuracy), figures on test pairs at that threshold."""
    val_scores = pair_scores(val, val_pairs.left, val_pairs.right)
    threshold, val_accuracy = best_threshold(val_scores, val_pairs.same)
    test_scores = pair_scores(test, test_pairs.left, test_pairs.right)
    scores = verification_scores(test_scores, test_pairs.same, threshold)
    far, tar, _ = roc_curve(test_scores, test_pairs.same)
    figures = {f"test_{k}": v for k, v in scores.items()}
    figures.update({"threshold": threshold, "val_verify_accuracy": val_accuracy})
    return Verification(figures, (far, tar))


def verification_report(val: Embedded, test: Embedded, pairs: int, seed: int) -> tuple[dict[str, Any], dict[str, Verification]]:
    """Summary figures (embedding, and ``pixel_``-prefixed for raw pixels) and both methods' results."""
    val_pairs = make_pairs(val.labels, pairs, seed, split="validation")
    test_pairs = make_pairs(test.labels, pairs, seed, split="test")
    methods = {"embedding": verify_method(val.embeddings, val_pairs, test.embeddings, test_pairs),
               "raw pixels": verify_method(val.pixels, val_pairs, test.pixels, test_pairs)}
    summary: dict[str, Any] = dict(methods["embedding"].figures)
    summary.update({f"pixel_{k}": v for k, v in methods["raw pixels"].figures.items()})
    summary.update({"val_pairs": len(val_pairs), "test_pairs": len(test_pairs)})
    return summary, methods
