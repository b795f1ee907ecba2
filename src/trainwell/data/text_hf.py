"""Texts as a Hugging Face model reads them: its own tokenizer, kept as its ``tokenizer.json`` and read as data by
the ``tokenizers`` library (no code of the model's is ever run), with the special tokens the model expects around
each text (BERT's ``[CLS] ... [SEP]``).

A text is cut to ``text.max_len`` ids, special tokens included, by ``text.truncate`` (``head``, ``tail`` or
``head+tail``) applied to the text's own tokens. The same encoding runs in training, in ``predict`` and behind an
export, from the ``tokenizer.json`` every checkpoint carries. The splits are the text task's (de-duplicated,
stratified); a batch is the text task's ``(tokens, lengths)``, the model building the attention mask from the
lengths.
"""

from __future__ import annotations

import numpy as np
import torch

from trainwell._errors import ConfigError
from trainwell.config import Config
from trainwell.data.bundle import DataBundle
from trainwell.data.text import split_texts, text_bundle
from trainwell.data.text_batch import TextData
from trainwell.data.tokenize import truncate


class HfTokens:
    """A tokenizer read from its ``tokenizer.json`` text: texts to ids with the model's special tokens, and back."""

    def __init__(self, tokenizer_json: str) -> None:
        from tokenizers import Tokenizer

        self.json = tokenizer_json
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.no_truncation()  # trainwell cuts the texts itself (text.truncate)
        self.tokenizer.no_padding()  # and pads per batch
        probe = "a"
        bare = self.tokenizer.encode(probe, add_special_tokens=False).ids
        full = self.tokenizer.encode(probe).ids
        at = next((i for i in range(len(full) - len(bare) + 1) if full[i:i + len(bare)] == bare), len(full))
        self.prefix, self.suffix = full[:at], full[at + len(bare):]  # the special tokens around a text

    def encode(self, texts: list[str], max_len: int, mode: str = "head", head_fraction: float = 0.5) -> list[list[int]]:
        """Each text's ids: the special tokens around its own, at most ``max_len`` in all."""
        return self.fit(self.own(texts), max_len, mode, head_fraction)

    def own(self, texts: list[str]) -> list[list[int]]:
        """Each text's own ids, uncut, without special tokens."""
        return [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def room(self, max_len: int) -> int:
        """How many of a text's own ids fit in ``max_len`` beside the special tokens."""
        room = max_len - len(self.prefix) - len(self.suffix)
        if room < 1:
            raise ConfigError(f"text.max_len {max_len} leaves no room for a text beside the model's "
                              f"{len(self.prefix) + len(self.suffix)} special tokens.",
                              fix=f"--set text.max_len={len(self.prefix) + len(self.suffix) + 128}")
        return room

    def fit(self, own: list[list[int]], max_len: int, mode: str, head_fraction: float) -> list[list[int]]:
        """Texts' own ids cut to fit ``max_len`` (``text.truncate``), the special tokens put around them."""
        room = self.room(max_len)
        return [self.prefix + truncate(ids, room, mode, head_fraction) + self.suffix for ids in own]

    def decode(self, ids: list[int]) -> str:
        """The text of ``ids`` without the special tokens (how the report shows what the model read)."""
        return str(self.tokenizer.decode(ids, skip_special_tokens=True))

    @property
    def size(self) -> int:
        return int(self.tokenizer.get_vocab_size())


def build_hf_text_data(config: Config, tokens: HfTokens, name: str, limit: int | None) -> DataBundle:
    """The text bundle encoded with a Hugging Face model's tokenizer. ``limit`` is the longest input the model takes:
    a longer ``text.max_len`` is lowered to it (in ``config``, so the run records the length it used) and said."""
    tc = config.text
    splits = split_texts(config.data, tc)
    notes = splits.info["notes"]
    if limit is not None and tc.max_len > limit:
        notes.append(f"text.max_len lowered from {tc.max_len} to {limit}, the longest input {name} takes")
        tc.max_len = limit
    own = {k: tokens.own(v) for k, v in splits.texts.items()}
    data = {k: TextData([torch.tensor(i, dtype=torch.long) for i in tokens.fit(v, tc.max_len, tc.truncate,
                                                                                 tc.head_fraction)],
                        torch.from_numpy(splits.labels[k].astype(np.int64)))
            for k, v in own.items()}
    cut = sum(1 for ids in own["train"] if len(ids) > tokens.room(tc.max_len))
    splits.info.update(vocab_size=tokens.size, tokenizer=name, max_len=tc.max_len, truncate=tc.truncate,
                       truncated_train=cut)
    notes.append(f"tokens: {name}'s own tokenizer (vocabulary {tokens.size:,}; its special tokens included), "
                 f"{cut:,} training texts truncated to {tc.max_len} tokens ({tc.truncate})")
    return text_bundle(splits, data, tc.max_len)

