"""Stratified splits with a fixed seed, and label values mapped to 0..C-1."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def encode_labels(values: Sequence[Any]) -> tuple[np.ndarray, list[str], dict[str, int] | None]:
    """Map label values to class indices 0..C-1 (sorted order).

    Returns the indices, the class names, and the mapping when it is not the identity
    (labels 1..10, strings, gaps) so it can be saved and shown; ``None`` otherwise.
    """
    arr = np.asarray(values)
    classes, y = np.unique(arr, return_inverse=True)
    names = [label_name(c) for c in classes]
    identity = np.issubdtype(arr.dtype, np.number) and all(
        float(c) == i for i, c in enumerate(classes.tolist()))
    mapping = None if identity else {n: i for i, n in enumerate(names)}
    return y.astype(np.int64), names, mapping


def label_name(value: Any) -> str:
    """The class name of a label value (``3.0`` -> ``"3"``)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def split_indices(labels: np.ndarray, fractions: Sequence[float], seed: int) -> list[np.ndarray]:
    """Split ``range(len(labels))`` into ``len(fractions) + 1`` parts: the rest first, then one per fraction.

    Stratified by label when every class has enough members, so each part keeps the
    class balance; plain shuffled otherwise.
    """
    from sklearn.model_selection import train_test_split

    rest = np.arange(len(labels))
    parts: list[np.ndarray] = []
    for frac in fractions:
        size = round(len(labels) * frac)
        if frac <= 0 or size < 1:
            parts.append(np.array([], dtype=np.int64))
            continue
        if size >= len(rest):
            raise ValueError(f"a {frac:.0%} split of {len(labels)} samples leaves nothing to train on")
        counts = np.bincount(labels[rest])
        present = int((counts > 0).sum())
        # scikit-learn can stratify only if each class has 2+ members and both sides can hold every class.
        can_stratify = counts[counts > 0].min() >= 2 and size >= present and len(rest) - size >= present
        rest, part = train_test_split(rest, test_size=size, stratify=labels[rest] if can_stratify else None,
                                      random_state=seed)
        parts.append(np.sort(part))
    return [np.sort(rest), *parts]
