"""Stratified splits with a fixed seed, and label values mapped to 0..C-1."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trainwell._errors import DataError


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


FRACTION_KEYS = ("data.val_fraction", "data.test_fraction")  # what the usual fractions are called, for messages


def split_indices(labels: np.ndarray, fractions: Sequence[float], seed: int, *,
                  names: Sequence[str] = ()) -> list[np.ndarray]:
    """Split ``range(len(labels))`` into ``len(fractions) + 1`` parts: the rest first, then one per fraction.

    Stratified by label when every class has enough members, so each part keeps the
    class balance; plain shuffled otherwise. A positive fraction that would get no sample, or
    fractions that leave none to train on, raise a :class:`DataError` that says how many samples
    there are and how many the fractions need; ``names`` name the fractions in it (config keys).
    """
    from sklearn.model_selection import train_test_split

    sizes = [round(len(labels) * f) if f > 0 else 0 for f in fractions]
    if any(f > 0 and size < 1 for f, size in zip(fractions, sizes)) or len(labels) - sum(sizes) < 1:
        raise _too_few(labels, fractions, sizes, names)
    rest = np.arange(len(labels))
    parts: list[np.ndarray] = []
    for size in sizes:
        if size == 0:
            parts.append(np.array([], dtype=np.int64))
            continue
        counts = np.bincount(labels[rest])
        present = int((counts > 0).sum())
        # scikit-learn can stratify only if each class has 2+ members and both sides can hold every class.
        can_stratify = counts[counts > 0].min() >= 2 and size >= present and len(rest) - size >= present
        rest, part = train_test_split(rest, test_size=size, stratify=labels[rest] if can_stratify else None,
                                      random_state=seed)
        parts.append(np.sort(part))
    return [np.sort(rest), *parts]


def _smallest(fractions: Sequence[float], each: int) -> int | None:
    """The fewest samples that give every positive fraction, and the rest, at least ``each`` samples
    (None if no number up to 100,000 does: fractions that add up to nearly 1)."""
    for n in range(1, 100_001):
        sizes = [round(n * f) for f in fractions if f > 0]
        if min(sizes, default=each) >= each and n - sum(sizes) >= each:
            return n
    return None


def _too_few(labels: np.ndarray, fractions: Sequence[float], sizes: list[int], names: Sequence[str]) -> DataError:
    n = len(labels)
    asked = [f"{name}={f:g}" if name else f"fraction {f:g}" for name, f in zip([*names, *[""] * len(fractions)],
                                                                              fractions)]
    empty = [f"{a} of {n} rounds to 0 samples" for a, f, size in zip(asked, fractions, sizes) if f > 0 and size < 1]
    why = "; ".join(empty) if empty else f"{', '.join(asked)} take {sum(sizes)} of them, leaving none to train on"
    classes = len(np.unique(labels))
    least, stratified = _smallest(fractions, 1), _smallest(fractions, classes)
    return DataError(
        f"{n} samples are too few to split ({why}). Every split needs at least one sample"
        + (f", so these fractions need at least {least} samples" if least else "")
        + (f"; to keep all {classes} classes in every split (stratified) each split needs {classes} or more, "
           f"about {stratified} samples in all" if stratified and classes > 1 else "") + ".",
        fix="add more data, or raise data.val_fraction / data.test_fraction so that each split gets a sample "
            "(data.test_fraction=0 means no test split)")
