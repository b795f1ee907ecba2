"""The token vocabulary: built on the training split only, ``<pad>`` = 0, ``<unk>`` = 1.

>>> v = Vocab.build([["好", "好", "差"]], min_freq=2)
>>> v.encode(["好", "差", "新"])
[2, 1, 1]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

PAD, UNK = "<pad>", "<unk>"
PAD_ID, UNK_ID = 0, 1


class Vocab:
    """Token <-> id. Saved in every checkpoint (``to_dict``) so ``predict`` encodes identically."""

    def __init__(self, tokens: list[str]) -> None:
        if tokens[:2] != [PAD, UNK]:
            raise ValueError(f"a vocabulary starts with {PAD!r}, {UNK!r}")
        self.itos = list(tokens)
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[list[str]], *, min_freq: int = 1, max_size: int | None = None) -> Vocab:
        """The tokens seen at least ``min_freq`` times, most frequent first (ties by token), capped at ``max_size``."""
        counts = Counter(t for tokens in texts for t in tokens)
        kept = sorted((t for t, c in counts.items() if c >= min_freq and t not in (PAD, UNK)),
                      key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[:max(0, max_size - 2)]
        return cls([PAD, UNK, *kept])

    def encode(self, tokens: list[str], max_len: int | None = None) -> list[int]:
        """Ids of the first ``max_len`` tokens; unknown tokens are ``<unk>``; never empty (``[<unk>]``)."""
        ids = [self.stoi.get(t, UNK_ID) for t in tokens[:max_len]]
        return ids or [UNK_ID]

    def __len__(self) -> int:
        return len(self.itos)

    def to_dict(self) -> dict[str, Any]:
        return {"itos": self.itos}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Vocab:
        return cls(list(d["itos"]))
