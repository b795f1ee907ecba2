"""lstm-batch-first / padding-not-masked: sequence layouts and padding that leak into predictions.

``lstm-batch-first`` compares the input layout each recurrent layer gets with the batch size the
loss reveals (one target per sample). ``padding-not-masked`` asks the model itself: on a few
sampled steps it runs one right-padded sequence as is and with its padding cut off; if the
padding changes the output, padding was counted as content.
"""

from __future__ import annotations

import sys
import warnings
import weakref
from contextlib import ExitStack
from typing import Any

import torch
from torch import nn

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.events import ForwardEvent, LossEvent

# ---------------------------------------------------------------------------------------------- lstm-batch-first


def _samples_in_loss(ev: LossEvent) -> int:
    """The batch size when the loss has one target per sample (class ids, one value each), else 0."""
    t, x = ev.target, ev.input
    if not (isinstance(t, torch.Tensor) and isinstance(x, torch.Tensor)) or t.ndim == 0 or x.ndim == 0:
        return 0
    if t.ndim == 1 or (t.ndim == 2 and t.shape[1] == 1):
        return int(t.shape[0]) if x.shape[0] == t.shape[0] else 0
    return 0  # per-step targets could be (time, batch): no safe reading


@register
class LstmBatchFirst(Check):
    id = "lstm-batch-first"
    severity = "warning"
    summary = "an RNN / LSTM / GRU reads the batch dimension as time (batch_first does not match the data)"
    text = {
        "en": Text(
            title="{rnn_type} reads the batch as time: batch_first does not match the data",
            general="An RNN reads the batch as time: batch_first does not match the data",
            message="{rnn} got input of shape {shape}. The batch size is {batch} (the loss has {batch} targets), "
                    "which is dimension {data_batch_dim} of that input, but the layer was built with "
                    "batch_first={batch_first}, so it takes dimension {rnn_batch_dim} as the batch and dimension "
                    "{data_batch_dim} as time. It runs through the different samples of the batch as if they were "
                    "the steps of one sequence, mixing examples together and never seeing each sequence in order, "
                    "so the model cannot learn from the order of the data.",
            fix="build the layer for the data's layout {data_layout}: {layout}  # its outputs then use the same "
                "layout; or reorder the input with x.transpose(0, 1)"),
        "zh": Text(
            title="{rnn_type} 把批次维当成了时间维：batch_first 与数据不符",
            general="RNN 把批次维当成了时间维：batch_first 与数据不符",
            message="{rnn} 收到的输入形状是 {shape}。批大小是 {batch}（损失里有 {batch} 个目标），对应输入的第 "
                    "{data_batch_dim} 维，但该层的 batch_first={batch_first}，所以它把第 {rnn_batch_dim} 维当作批次、"
                    "第 {data_batch_dim} 维当作时间。它把一个批次里的不同样本当作同一条序列的各个时间步来处理，"
                    "样本之间互相混在一起，也从来没有按顺序看到每条序列，模型学不到数据的顺序信息。",
            fix="按数据的排列 {data_layout} 构建该层：{layout}  # 输出也会是同样的排列；或者用 x.transpose(0, 1) "
                "调整输入的维度顺序"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.pending: list[tuple[nn.RNNBase, tuple[int, ...], tuple[int, ...] | None, str | None]] = []
        self.wrong: weakref.WeakKeyDictionary[nn.RNNBase, int] = weakref.WeakKeyDictionary()
        self.right: weakref.WeakKeyDictionary[nn.RNNBase, int] = weakref.WeakKeyDictionary()

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.reported or not ev.leaf_calls:
            return
        top = ev.inputs[0] if ev.inputs and isinstance(ev.inputs[0], torch.Tensor) else None
        seen = [(m, tuple(x.shape), tuple(top.shape) if top is not None else None, ev.where)
                for m, x, _ in ev.leaf_calls
                if isinstance(m, nn.RNNBase) and isinstance(x, torch.Tensor) and x.ndim == 3]  # PackedSequence: no
        if seen:
            self.pending = seen

    @sampled_only  # ``pending`` is filled by a sampled step's forward, and its loss comes in the same step
    def on_loss(self, ev: LossEvent) -> None:
        if not self.pending or self.reported:
            return
        pending, self.pending = self.pending, []
        batch = _samples_in_loss(ev)
        if batch < 2:
            return
        for rnn, shape, top, where in pending:
            if shape[0] == shape[1] or batch not in shape[:2]:
                continue  # ambiguous (B == T), or an RNN over something else
            data_batch_dim = shape.index(batch)
            rnn_batch_dim = 0 if rnn.batch_first else 1
            if data_batch_dim == rnn_batch_dim:
                self.right[rnn] = self.right.get(rnn, 0) + 1
                continue
            if top is not None and shape[rnn_batch_dim] not in top:
                continue  # the axis it batches over is not one of the data's (B*S sentences of W == B words)
            self.wrong[rnn] = hits = self.wrong.get(rnn, 0) + 1
            if hits >= 2 and not self.right.get(rnn):
                self._report(rnn, shape, batch, data_batch_dim, rnn_batch_dim, where)
                return

    def _report(self, rnn: nn.RNNBase, shape: tuple[int, ...], batch: int, data_dim: int, rnn_dim: int,
                where: str | None) -> None:
        kind = type(rnn).__name__
        flag = "batch_first=False" if rnn.batch_first else "batch_first=True"
        extra = (f", num_layers={rnn.num_layers}" if rnn.num_layers > 1 else "") + \
            (", bidirectional=True" if rnn.bidirectional else "")
        layout = f"nn.{kind}({rnn.input_size}, {rnn.hidden_size}{extra}, {flag})"
        data_layout = "(time, batch, features)" if rnn.batch_first else "(batch, time, features)"
        self.report(where, {"layer": repr(rnn), "input_shape": list(shape), "batch_size": batch,
                            "batch_first": rnn.batch_first, "batches_seen": self.wrong.get(rnn, 0)},
                    rnn=repr(rnn), rnn_type=kind, shape=tuple(shape), batch=batch, batch_first=rnn.batch_first,
                    data_batch_dim=data_dim, rnn_batch_dim=rnn_dim, layout=layout,
                    data_layout=data_layout)


# ---------------------------------------------------------------------------------------------- padding-not-masked

MAX_TESTS = 6  # negative verdicts before the check stops spending time on a model
REL_TOL = {torch.float16: 2e-2, torch.bfloat16: 2e-2}  # fp32 / fp64: REL_TOL_DEFAULT
REL_TOL_DEFAULT = 1e-3  # far above float32 rounding, far below what counted padding does


def _call_kwargs(module: nn.Module) -> dict[str, Any] | None:
    """The keyword arguments of the running top-level call (the global hooks only see positional ones)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_call_impl" and frame.f_locals.get("self") is module:
            return dict(frame.f_locals.get("kwargs") or {})
        frame = frame.f_back
    return None


def _pad_id(model: nn.Module) -> int | None:
    """The embedding's padding_idx, else 0; None when the model embeds no tokens."""
    embeddings = [m for m in model.modules() if isinstance(m, (nn.Embedding, nn.EmbeddingBag))]
    if not embeddings:
        return None
    for e in embeddings:
        if e.padding_idx is not None:
            return int(e.padding_idx) % e.num_embeddings
    return 0


def _trailing_padding(x: torch.Tensor, pad: int) -> torch.Tensor | None:
    """Length of each row's trailing padding, when the pad id appears only there and lengths vary."""
    is_pad = x == pad
    trailing = is_pad.flip(1).long().cumprod(1).sum(1)
    if not bool((is_pad.sum(1) == trailing).all()):
        return None  # the pad id also appears inside the text: not padding
    if int(trailing.max()) == 0 or int(trailing.min()) == int(trailing.max()) or int(trailing.max()) >= x.shape[1]:
        return None
    return trailing


def _row_args(value: Any, batch: int, steps: int, i: int, length: int) -> tuple[Any, Any] | None:
    """One argument cut to row ``i``: (as is, with the padding cut off); None when it cannot be matched."""
    if isinstance(value, torch.Tensor):
        if value.ndim == 0 or value.shape[0] != batch:
            return value, value  # shared across the batch
        row = value[i:i + 1]
        if value.ndim >= 2 and value.shape[1] == steps:
            return row, row[:, :length]  # masks, per-step features
        if value.ndim == 1 and not value.is_floating_point():
            return (row, row) if int(row) == length else None  # lengths: must be the trimmed length
        return row, row
    if type(value) in (list, tuple) and len(value) == batch and batch > 1:  # per-sample values (lengths, texts)
        item = value[i]
        if isinstance(item, int) and not isinstance(item, bool) and item != length:
            return None
        return type(value)([item]), type(value)([item])
    if value is None or isinstance(value, (bool, int, float, str)):
        return value, value
    return None


def _first_float(out: Any) -> torch.Tensor | None:
    if isinstance(out, torch.Tensor):
        return out if out.is_floating_point() else None
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) else ()
    for x in items:
        t = _first_float(x)
        if t is not None:
            return t
    return None


def _difference(a: torch.Tensor, b: torch.Tensor, steps: int, length: int) -> float | None:
    """Relative difference of the outputs; per-step outputs are compared on the steps both have."""
    if a.shape != b.shape:
        diff = [d for d in range(a.ndim) if a.ndim == b.ndim and a.shape[d] != b.shape[d]]
        if len(diff) != 1 or a.shape[diff[0]] != steps or b.shape[diff[0]] != length:
            return None
        a = a.narrow(diff[0], 0, length)
    a, b = a.detach().double(), b.detach().double()
    if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
        return None
    scale = max(float(a.norm()), float(b.norm()), 1e-12)
    return float((a - b).norm()) / scale


@register
class PaddingNotMasked(Check):
    id = "padding-not-masked"
    severity = "warning"
    summary = "padding tokens change the model's output: padded sequences are pooled or encoded without a mask"
    text = {
        "en": Text(
            title="Padding changes the model's predictions",
            message="The batches hold sequences of different lengths, right-padded with token {pad}. Running the "
                    "model on one sequence with its {padded} padding tokens and again with the padding cut off "
                    "gave outputs that differ by {diff_pct}% (it should be 0%): the padding is being treated as "
                    "content, e.g. averaged into a mean, or read by an RNN as if it were real tokens (the last "
                    "output out[:, -1] of a padded sequence is a padding step). Short sequences get predictions "
                    "dominated by padding, and the model learns the length instead of the content.",
            fix="ignore the padding: mask = (x != {pad}).unsqueeze(-1); pooled = (h * mask).sum(1) / "
                "mask.sum(1).clamp(min=1)  # for an RNN: nn.utils.rnn.pack_padded_sequence(emb, lengths.cpu(), "
                "batch_first=True, enforce_sorted=False) and use h_n[-1]"),
        "zh": Text(
            title="填充（padding）改变了模型的预测",
            message="批次中的序列长度不同，右侧用 token {pad} 填充。对同一条序列，带着 {padded} 个填充 token "
                    "运行一次模型，再去掉填充运行一次，两次输出相差 {diff_pct}%（本应为 0%）：填充被当作了内容，"
                    "例如被算进了平均池化，或被 RNN 当作真实 token 读入（填充序列的最后输出 out[:, -1] 其实是填充位置）。"
                    "短序列的预测被填充主导，模型学到的是长度而不是内容。",
            fix="忽略填充：mask = (x != {pad}).unsqueeze(-1); pooled = (h * mask).sum(1) / mask.sum(1).clamp(min=1)"
                "  # RNN 则用 nn.utils.rnn.pack_padded_sequence(emb, lengths.cpu(), batch_first=True, "
                "enforce_sorted=False)，并取 h_n[-1]"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.positive = 0
        self.negative = 0
        self.last_step = -1
        self.failures: weakref.WeakKeyDictionary[nn.Module, int] = weakref.WeakKeyDictionary()

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.reported or self.negative >= MAX_TESTS or not self.session.sampled:
            return
        x = ev.inputs[0] if ev.inputs else None
        if not (isinstance(x, torch.Tensor) and x.ndim == 2 and x.dtype in (torch.int64, torch.int32, torch.int16,
                                                                          torch.uint8, torch.int8)):
            return
        model = ev.module
        if self.session.step == self.last_step or self.failures.get(model, 0) >= 3 or hasattr(model, "_orig_mod"):
            return  # once per sampled step; torch.compile'd models would recompile for the new shapes
        if any(self.session.user_hooks(m) for m in model.modules()):
            return  # the user's hooks (feature capture) would see the doctor's extra calls
        pad = _pad_id(model)
        if pad is None or x.shape[0] < 2 or x.shape[1] < 3:
            return
        trailing = _trailing_padding(x, pad)
        kwargs = _call_kwargs(model)
        if trailing is None or kwargs is None:
            return
        self.last_step = self.session.step
        i = int(trailing.argmax())
        verdict = self._test(model, ev.inputs, kwargs, i, x.shape[1] - int(trailing[i]))
        if verdict is None:
            self.failures[model] = self.failures.get(model, 0) + 1
            return
        if verdict < self._tolerance(model):
            self.negative += 1
            return
        self.positive += 1
        if self.positive >= 2 and self.positive > self.negative:
            self.report(ev.where, {"pad_id": pad, "sequence_length": int(x.shape[1]),
                                   "padding_tokens": int(trailing[i]), "relative_output_change": verdict,
                                   "tests_changed": self.positive, "tests_unchanged": self.negative},
                        pad=pad, padded=int(trailing[i]), diff_pct=round(100 * verdict, 2))

    @staticmethod
    def _tolerance(model: nn.Module) -> float:
        p = next(model.parameters(), None)
        return REL_TOL.get(p.dtype, REL_TOL_DEFAULT) if p is not None else REL_TOL_DEFAULT

    def _test(self, model: nn.Module, inputs: tuple[Any, ...], kwargs: dict[str, Any], i: int,
              length: int) -> float | None:
        """Relative output change from cutting row ``i``'s padding; None when the call cannot be matched."""
        x = inputs[0]
        batch, steps = int(x.shape[0]), int(x.shape[1])
        full_args, trim_args = [x[i:i + 1]], [x[i:i + 1, :length]]
        full_kw: dict[str, Any] = {}
        trim_kw: dict[str, Any] = {}
        for a in inputs[1:]:
            pair = _row_args(a, batch, steps, i, length)
            if pair is None:
                return None
            full_args.append(pair[0])
            trim_args.append(pair[1])
        for k, v in kwargs.items():
            pair = _row_args(v, batch, steps, i, length)
            if pair is None:
                return None
            full_kw[k], trim_kw[k] = pair
        full = self._run(model, x.device, full_args, full_kw)
        trim = self._run(model, x.device, trim_args, trim_kw)
        if full is None or trim is None:
            return None
        return _difference(full, trim, steps, length)

    def _run(self, model: nn.Module, device: torch.device, args: list[Any],
             kwargs: dict[str, Any]) -> torch.Tensor | None:
        """Call the model in eval mode without gradients, events, autocast or TF32; restore every flag and RNG."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # warnings raised by the doctor's own calls would only confuse the user
            return self._run_quietly(model, device, args, kwargs)

    def _run_quietly(self, model: nn.Module, device: torch.device, args: list[Any],
                     kwargs: dict[str, Any]) -> torch.Tensor | None:
        flags = [(m, m.training) for m in model.modules()]
        cpu_rng = torch.get_rng_state()
        cuda = device.type == "cuda"
        cuda_rng = torch.cuda.get_rng_state_all() if cuda else None
        tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) if cuda else None
        try:
            with ExitStack() as stack:
                stack.enter_context(self.session.quiet())
                stack.enter_context(torch.no_grad())
                try:
                    stack.enter_context(torch.autocast(device_type=device.type, enabled=False))
                except (RuntimeError, ValueError):
                    pass  # a device type without autocast
                if tf32 is not None:  # TF32 rounding would look like a difference
                    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
                for m, _ in flags:
                    m.training = False  # eval mode, without running a user's own train() override
                return _first_float(model(*args, **kwargs))
        except Exception:  # noqa: BLE001 - the model cannot take this call (shapes, lengths): no verdict
            return None
        finally:
            for m, training in flags:
                m.training = training
            if tf32 is not None:
                torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
            torch.set_rng_state(cpu_rng)
            if cuda_rng is not None:
                torch.cuda.set_rng_state_all(cuda_rng)
