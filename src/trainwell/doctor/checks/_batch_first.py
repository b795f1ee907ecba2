"""Shape errors whose real cause is an RNN / LSTM / GRU built without ``batch_first=True`` and fed
``(batch, seq, features)``: it reads the batch as time, so its outputs hold ``seq`` rows where the
rest of the code expects ``batch`` rows, and a later Linear, view or loss fails.

``time_major_input`` finds such an RNN and the 3-D input it read; the explainers in ``_shape_errors``
then name ``batch_first`` instead of only the view / reshape that failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from trainwell.doctor.checks._error_parsing import Context, fmt, shape

Words = tuple[str, str]


@dataclass(frozen=True)
class TimeMajor:
    """A non-batch_first RNN and the (batch, seq, features) input it read as (seq, batch, features)."""

    kind: str  # "LSTM", "GRU", "RNN"
    batch: int  # dimension 0 of the input: the user's batch, read as time
    seq: int  # dimension 1: the user's time steps, read as the batch
    features: int
    hidden: int

    def note(self) -> Words:
        return ((f"The {self.kind} was built without batch_first=True, so it read its input of shape "
                 f"{fmt((self.batch, self.seq, self.features))} as (seq_len={self.batch}, batch={self.seq}, "
                 f"features): it treated the {self.batch} samples as time steps and the {self.seq} time steps as "
                 f"the batch, and everything after it holds {self.seq} rows where {self.batch} were expected.",
                 f"这个 {self.kind} 建的时候没有 batch_first=True，所以它把形状为 "
                 f"{fmt((self.batch, self.seq, self.features))} 的输入当成了 (seq_len={self.batch}, batch={self.seq}, "
                 f"特征)：{self.batch} 个样本被当成了时间步，{self.seq} 个时间步被当成了 batch，"
                 f"于是它之后的张量有 {self.seq} 行，而代码期望的是 {self.batch} 行。"))

    def fix(self) -> Words:
        return ((f"build it with batch_first=True: nn.{self.kind}({self.features}, {self.hidden}, batch_first=True)  "
                 f"# then out[:, -1] is the last step of each sample; h_n stays (num_layers, batch, hidden)",
                 f"建的时候加上 batch_first=True：nn.{self.kind}({self.features}, {self.hidden}, batch_first=True)  "
                 f"# 这样 out[:, -1] 才是每个样本的最后一步；h_n 仍是 (num_layers, batch, hidden)"))


def _of(rnn: nn.RNNBase, s: tuple[int, ...] | None) -> TimeMajor | None:
    if rnn.batch_first or s is None or len(s) != 3 or s[0] == s[1]:
        return None
    return TimeMajor(type(rnn).__name__, s[0], s[1], s[2], rnn.hidden_size)


def _rnn_input_from_model(root: nn.Module, x: Any) -> TimeMajor | None:
    """The model's own input standing in for its RNN's: (batch, seq, features) with the RNN's input_size, or
    token ids (batch, seq) going through an Embedding of that width."""
    if not isinstance(x, torch.Tensor):
        return None
    widths = {m.embedding_dim for m in root.modules() if isinstance(m, nn.Embedding)}
    for rnn in (m for m in root.modules() if isinstance(m, nn.RNNBase)):
        if x.ndim == 3 and x.shape[-1] == rnn.input_size:
            return _of(rnn, tuple(x.shape))
        if x.ndim == 2 and not x.is_floating_point() and rnn.input_size in widths:
            return _of(rnn, (*x.shape, rnn.input_size))
    return None


def time_major_input(ctx: Context, seen: TimeMajor | None) -> TimeMajor | None:
    """A non-batch_first RNN fed (batch, seq, features) around this error: the RNN that failed, the RNN inside
    the model whose forward failed, or ``seen``, the last one a model call showed."""
    rnn = ctx.innermost((nn.RNNBase,))
    if isinstance(rnn, nn.RNNBase):
        return _of(rnn, shape(ctx.module_input(rnn)))
    root = ctx.modules[0] if ctx.modules else None
    if root is not None:
        found = _rnn_input_from_model(root, ctx.module_input(root))
        if found is not None:
            return found
    return seen


def watch(module: nn.Module, x: Any) -> TimeMajor | None:
    """``module`` as a time-major RNN that got a 3-D input ``x`` (for the forward events), else None."""
    if isinstance(module, nn.RNNBase) and isinstance(x, torch.Tensor):
        return _of(module, tuple(x.shape))
    return None
