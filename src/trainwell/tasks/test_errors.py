"""A classification run's test split as the report shows it: the confusion matrix and the worst mistakes.

Computed once at the end of a run with the best checkpoint's weights (``Task.finish``): every test sample's
class probabilities, then the counts of (true class, predicted class) and the wrong predictions made with the
highest confidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

BATCH = 256
WORST = 8  # wrong predictions shown in the report


@dataclass
class Mistake:
    """One wrong test prediction: the sample's position in the test split, its classes and the confidence."""

    index: int
    true: int
    predicted: int
    probability: float  # of the predicted class
    true_probability: float


def predict_probabilities(model: nn.Module, dataset: Any, *, device: torch.device,
                          transform: Callable[[Any, Any], Any] | None,
                          collate: Callable[[list[Any]], Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities (N, C), labels (N,)) of every sample of ``dataset``, in its order, in eval mode without
    autograd (the model's mode is restored after). ValueError when the model's output is not one row of class
    scores per sample."""
    from torch.utils.data import default_collate

    from trainwell.engine.trainer import call_model, to_device

    collate = collate or default_collate
    was_training = model.training
    model.eval()
    probs, labels = [], []
    try:
        with torch.inference_mode():
            for start in range(0, len(dataset), BATCH):
                x, y = collate([dataset[i] for i in range(start, min(start + BATCH, len(dataset)))])
                x = to_device(x, device)
                out = call_model(model, transform(x, None) if transform is not None else x)
                if not (isinstance(out, torch.Tensor) and out.ndim == 2 and out.shape[0] == len(y)):
                    raise ValueError("the model's output is not one row of class scores per sample")
                probs.append(torch.softmax(out.float(), dim=1).cpu())
                labels.append(torch.as_tensor(y).cpu())
    finally:
        model.train(was_training)
    return torch.cat(probs).numpy(), torch.cat(labels).numpy()


def confusion_matrix(labels: np.ndarray, predicted: np.ndarray, num_classes: int) -> np.ndarray:
    """Counts (num_classes, num_classes): row = true class, column = predicted class."""
    counts = np.zeros((num_classes, num_classes), dtype=np.int64)
    np.add.at(counts, (labels.astype(np.int64), predicted.astype(np.int64)), 1)
    return counts


def worst_mistakes(probs: np.ndarray, labels: np.ndarray, k: int = WORST) -> list[Mistake]:
    """The ``k`` wrong predictions made with the highest probability, most confident first (ties: split order)."""
    predicted = probs.argmax(axis=1)
    wrong = np.flatnonzero(predicted != labels)
    confidence = probs[wrong, predicted[wrong]]
    order = wrong[np.argsort(-confidence, kind="stable")][:k]
    return [Mistake(int(i), int(labels[i]), int(predicted[i]), float(probs[i, predicted[i]]),
                    float(probs[i, labels[i]])) for i in order]
