"""Classification: the loss, and top-k predictions with class names."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from trainwell.tasks.base import TASKS, Task


@TASKS.register("classification", "images or tables -> one class per sample (cross-entropy on logits)")
class ClassificationTask(Task):
    """The defaults of :class:`Task` are classification."""


def make_loss(label_smoothing: float = 0.0) -> nn.Module:
    # CrossEntropyLoss takes raw logits: the model must not end in Softmax (guide A3.1).
    return nn.CrossEntropyLoss(label_smoothing=label_smoothing)


def topk(logits: torch.Tensor, class_names: list[str], k: int) -> list[list[dict[str, Any]]]:
    """Per row: the ``k`` most probable classes with their probabilities, most likely first."""
    probs = torch.softmax(logits.float(), dim=1)
    k = min(k, probs.shape[1])
    values, indices = probs.topk(k, dim=1)
    return [[{"class": class_names[int(i)], "index": int(i), "probability": float(p)}
             for p, i in zip(vals, idxs)] for vals, idxs in zip(values, indices)]
