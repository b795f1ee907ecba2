"""Identity splits for the embedding task: the closed and the open protocol.

* ``closed``: the dataset's own stratified split (same identities everywhere, held-out images).
* ``open``: the held-out identities (``embedding.open_classes``, default the last 30 % by name)
  never reach training. All images of the other identities train; the held-out identities'
  images are split into validation and test (in the ratio val_fraction : test_fraction). So
  both the per-epoch ``val_auc`` that picks best.pt and the test figures are measured on people
  the model has never seen, and the test images are never used to choose anything.

Identities with a single image cannot form a same-identity pair: that is an error naming them,
or, with ``data.skip_bad``, they are skipped (counted in ``info["skipped_identities"]`` and named
in the run output). Labels are renumbered so training
identities are ``0..K-1`` (the class centres of a margin loss) and held-out ones come after.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from trainwell._errors import ConfigError, DataError
from trainwell._registry import did_you_mean
from trainwell.config import DataConfig, EmbeddingConfig
from trainwell.data.bundle import DataBundle, Preprocess, TensorData, fit_stats
from trainwell.data.splits import split_indices

OPEN_FRACTION = 0.3  # default share of identities held out by the open protocol
_STATS_SAMPLE = 1000  # image-folder: images used to measure mean / std


class _Pool:
    """The samples of one or more splits in one indexable list (in-memory tensors or image files)."""

    def __init__(self, splits: list[Dataset]) -> None:
        from trainwell.data.folder import ImageFiles

        first = splits[0]
        if all(isinstance(s, TensorData) for s in splits):
            self.x: torch.Tensor | None = torch.cat([s.x for s in splits])  # type: ignore[attr-defined]
            self.labels = torch.cat([s.y for s in splits]).numpy()  # type: ignore[attr-defined]
            self.items: list[Any] = []
        elif all(isinstance(s, ImageFiles) for s in splits):
            self.x = None
            self.items = [it for s in splits for it in s.items]  # type: ignore[attr-defined]
            self.labels = np.array([lab for _, lab in self.items], dtype=np.int64)
            self.channels, self.geometry = first.channels, first.geometry  # type: ignore[attr-defined]
        else:
            raise DataError("The embedding task reads images held in memory (mnist-5k, lfw, olivetti-faces, ...) or "
                            f"an image folder; this dataset gives {type(first).__name__}.",
                            fix="use --data image-folder:DIR with one sub-folder per person")

    def subset(self, idx: np.ndarray, relabel: np.ndarray) -> Dataset:
        """The samples at ``idx`` with labels mapped through ``relabel`` (old index -> new index)."""
        new = relabel[self.labels[idx]]
        if self.x is not None:
            return TensorData(self.x[torch.from_numpy(idx)], torch.from_numpy(new.astype(np.int64)))
        from trainwell.data.folder import ImageFiles

        return ImageFiles([(self.items[i][0], int(n)) for i, n in zip(idx, new)], self.channels, self.geometry)


def identity_bundle(base: DataBundle, emb: EmbeddingConfig, data: DataConfig) -> DataBundle:
    """Re-split ``base`` for verification with ``emb.protocol``; see the module docstring."""
    splits = [s for s in (base.train, base.val, base.test) if s is not None and len(s) > 0]  # type: ignore[arg-type]
    pool = _Pool(splits)
    names = base.class_names
    counts = np.bincount(pool.labels, minlength=len(names))
    single = [names[i] for i in np.flatnonzero(counts == 1)]
    usable = [i for i in range(len(names)) if counts[i] >= 2]
    where = base.info.get("source", data.name)
    if single and not data.skip_bad:
        shown = ", ".join(repr(n) for n in single[:5]) + (f" and {len(single) - 5} more" if len(single) > 5 else "")
        raise DataError(f"{where}: {len(single)} identit{'y has' if len(single) == 1 else 'ies have'} a single image "
                        f"({shown}); an identity needs two images to form a same-identity pair.",
                        fix="add a second image of each, move those folders out, or leave them out of this run "
                            "with --set data.skip_bad=true")
    if len(usable) < 2:
        raise DataError(f"{where}: only {len(usable)} identit{'y has' if len(usable) == 1 else 'ies have'} two or more "
                        "images; verification needs at least 2 (same-identity pairs need two images of one person, "
                        "different pairs two people).",
                        fix="add identities (one sub-folder per person, each with 2+ images)")
    if emb.protocol == "open":
        held = _held_out(names, usable, emb.open_classes)
        known = [i for i in usable if i not in held]
        if len(known) < 2:
            raise ConfigError(f"embedding.open_classes leaves {len(known)} identit{'y' if len(known) == 1 else 'ies'} "
                              "to train on; training needs at least 2.", fix="hold out fewer identities")
    else:
        held, known = [], usable
    order = known + held  # training identities first: they are the margin loss's classes 0..K-1
    relabel = np.full(len(names), -1, dtype=np.int64)
    relabel[order] = np.arange(len(order))
    if emb.protocol == "open":
        train, val, test, pre = _open_split(pool, known, held, relabel, base.preprocess, data)
    else:
        train, val, test, pre = _closed_split(base, pool, splits, relabel, usable, len(names))
    info = dict(base.info)
    info.update({
        "protocol": emb.protocol, "train_identities": len(known),
        "heldout_identities": [names[i] for i in held],
        "sizes": {"train": len(train), "val": len(val) if val else 0, "test": len(test) if test else 0},
    })
    if [names[i] for i in order] != names:
        info["label_mapping"] = {names[i]: int(relabel[i]) for i in order}
    if single:
        info["skipped_identities"] = len(single)
        info["skipped_identity_names"] = single[:20]
    return replace(base, train=train, val=val, test=test, num_classes=len(order),
                   class_names=[names[i] for i in order], preprocess=pre, info=info)


def _held_out(names: list[str], usable: list[int], requested: list[str]) -> list[int]:
    if not requested:
        n = max(2, math.ceil(OPEN_FRACTION * len(usable)))
        return usable[-n:]
    index = {n: i for i, n in enumerate(names)}
    unknown = [r for r in requested if r not in index]
    if unknown:
        raise ConfigError(f"embedding.open_classes: {', '.join(map(repr, unknown))} "
                          f"{'is not an identity' if len(unknown) == 1 else 'are not identities'} of this "
                          f"dataset.{did_you_mean(unknown[0], names)} Identities: {', '.join(names[:30])}"
                          + (" ..." if len(names) > 30 else "") + ".")
    held = sorted({index[r] for r in requested if index[r] in usable})
    if len(held) < 2:
        raise ConfigError(f"embedding.open_classes holds out {len(held)} identit{'y' if len(held) == 1 else 'ies'} with "
                          "two or more images; verification pairs need at least 2.",
                          fix="list at least two identities, e.g. --set embedding.open_classes=[7,8,9]")
    return held


def _open_split(pool: _Pool, known: list[int], held: list[int], relabel: np.ndarray, pre: Preprocess,
                data: DataConfig) -> tuple[Dataset, Dataset, Dataset, Preprocess]:
    train_idx = np.flatnonzero(np.isin(pool.labels, known))
    held_idx = np.flatnonzero(np.isin(pool.labels, held))
    test_share = data.test_fraction / (data.val_fraction + data.test_fraction)
    # Stratified by identity, so every held-out person appears in both validation and test.
    rest, test_part = split_indices(pool.labels[held_idx], [test_share], data.split_seed)
    rng = np.random.default_rng(data.split_seed)
    # Shuffled, so each evaluation batch mixes identities (folders are read person by person).
    val_idx, test_idx = rng.permutation(held_idx[rest]), rng.permutation(held_idx[test_part])
    train = pool.subset(train_idx, relabel)
    return train, pool.subset(val_idx, relabel), pool.subset(test_idx, relabel), _refit(pre, pool, train_idx, data)


def _closed_split(base: DataBundle, pool: _Pool, splits: list[Dataset], relabel: np.ndarray, usable: list[int],
                  n_names: int) -> tuple[Dataset, Dataset | None, Dataset | None, Preprocess]:
    if len(usable) == n_names:  # nothing skipped: the dataset's own split and preprocessing as they are
        return base.train, base.val, base.test, base.preprocess
    out: list[Dataset | None] = []
    start = 0
    for split in (base.train, base.val, base.test):
        if split is None or len(split) == 0:  # type: ignore[arg-type]
            out.append(None)
            continue
        idx = np.arange(start, start + len(split))  # type: ignore[arg-type]
        start += len(split)  # type: ignore[arg-type]
        out.append(pool.subset(idx[np.isin(pool.labels[idx], usable)], relabel))
    assert out[0] is not None
    return out[0], out[1], out[2], base.preprocess


def _refit(pre: Preprocess, pool: _Pool, train_idx: np.ndarray, data: DataConfig) -> Preprocess:
    """Mean and std measured on the new training split only (held-out identities must not leak in)."""
    if pool.x is not None:
        mean, std = fit_stats(pool.x[torch.from_numpy(train_idx)], "image", pre.scale)
    else:
        from trainwell.data.folder import load_image

        rng = np.random.default_rng(data.split_seed)
        sample = rng.choice(train_idx, size=min(_STATS_SAMPLE, len(train_idx)), replace=False)
        stack = torch.stack([load_image(pool.items[i][0], pool.channels, pool.geometry) for i in sample])
        mean, std = fit_stats(stack, "image", 1.0)
    return replace(pre, mean=mean, std=std)
