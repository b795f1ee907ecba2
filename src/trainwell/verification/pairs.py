"""Balanced same / different pairs from a labelled split, deterministic from a seed.

Half the pairs join two different images of one identity, half join images of two different
identities. Pairs are unordered and never repeated; when a split cannot give ``n // 2``
distinct same-identity pairs, it gives all it has and as many different pairs, so the set
stays balanced.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainwell._errors import DataError

_TRIES = 20  # sampling rounds before falling back to enumerating (small splits)


@dataclass(frozen=True)
class Pairs:
    """Index pairs into a split: ``left[i]``, ``right[i]`` and whether they show the same identity."""

    left: np.ndarray  # (P,) int64
    right: np.ndarray  # (P,) int64
    same: np.ndarray  # (P,) bool

    def __len__(self) -> int:
        return len(self.same)


def make_pairs(labels: np.ndarray, n: int, seed: int, *, split: str = "split") -> Pairs:
    """``n`` pairs (at most), half same-identity and half different, sampled with ``seed``.

    Raises DataError when the split has fewer than two identities or no identity with two images.
    """
    labels = np.asarray(labels, dtype=np.int64)
    ids, counts = np.unique(labels, return_counts=True)
    if len(ids) < 2:
        raise DataError(f"The {split} split has {len(ids)} identit{'y' if len(ids) == 1 else 'ies'}: "
                        "verification needs at least 2 to form different-identity pairs.",
                        fix="use more identities (or, with the open protocol, more held-out identities: "
                            "--set embedding.open_classes=[...])")
    possible_same = int((counts * (counts - 1) // 2).sum())
    if possible_same == 0:
        raise DataError(f"No identity in the {split} split has two images, so no same-identity pair can be made.",
                        fix="give each identity several images, or use a larger split (data.val_fraction / "
                            "data.test_fraction)")
    rng = np.random.default_rng(seed)
    half = min(n // 2, possible_same)
    same = _sample_same(labels, half, possible_same, rng)
    diff = _sample_different(labels, half, rng)
    k = min(len(same), len(diff))  # few possible different pairs (one big identity): stay balanced
    same, diff = same[:k], diff[:k]
    left = np.concatenate([same[:, 0], diff[:, 0]])
    right = np.concatenate([same[:, 1], diff[:, 1]])
    is_same = np.concatenate([np.ones(len(same), bool), np.zeros(len(diff), bool)])
    return Pairs(left, right, is_same)


def _unique_rows(rows: np.ndarray) -> np.ndarray:
    """Unordered pairs without repeats, first occurrence kept (order otherwise unchanged)."""
    rows = np.sort(rows, axis=1)
    _, first = np.unique(rows, axis=0, return_index=True)
    return rows[np.sort(first)]


def _sample_same(labels: np.ndarray, k: int, possible: int, rng: np.random.Generator) -> np.ndarray:
    if k * 2 >= possible:  # small split: enumerate every same pair and pick k of them
        rows = np.array([(i, j) for c in np.unique(labels) for idx in [np.flatnonzero(labels == c)]
                         for a, i in enumerate(idx) for j in idx[a + 1:]], dtype=np.int64)
        return rows[np.sort(rng.choice(len(rows), size=k, replace=False))]
    members = {int(c): np.flatnonzero(labels == c) for c in np.unique(labels)}
    anchors = np.flatnonzero(np.array([len(members[int(c)]) >= 2 for c in labels]))
    found = np.empty((0, 2), dtype=np.int64)
    for _ in range(_TRIES):
        a = rng.choice(anchors, size=2 * k)
        b = np.array([rng.choice(members[int(labels[i])][members[int(labels[i])] != i]) for i in a])
        found = _unique_rows(np.concatenate([found, np.stack([a, b], axis=1)]))
        if len(found) >= k:
            break
    return found[:k]


def _sample_different(labels: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    found = np.empty((0, 2), dtype=np.int64)
    for _ in range(_TRIES):
        a = rng.integers(0, len(labels), size=2 * k)
        b = rng.integers(0, len(labels), size=2 * k)
        keep = labels[a] != labels[b]
        found = _unique_rows(np.concatenate([found, np.stack([a[keep], b[keep]], axis=1)]))
        if len(found) >= k:
            break
    return found[:k]
