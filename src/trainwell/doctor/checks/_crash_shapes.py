"""Crash causes read from the shapes of what an operation was given: tensors joined with different numbers of
dimensions, a pooling / convolution / resize given too few axes, a value that does not fit the slot it is written
into, an index of the wrong rank, an RNN state of the wrong rank, class weights of the wrong length, a batch-norm
batch of one sample, an attention mask for another length, and a top-k larger than the dimension.

Each rule takes a ``Failure`` and returns (cause, fix) in English and Chinese, or ``None``.
"""

from __future__ import annotations

import math
import re

from torch import nn

from trainwell.doctor.checks._failure import Failure, Operand, fmt_shape, short_name

Words = tuple[str, str]
Found = tuple[Words, Words] | None

_JOIN = {"cat", "concat", "concatenate", "stack"}  # (hstack / vstack / dstack take inputs of other ranks)
_SPATIAL = re.compile(r"([123])d$")
_INDEXED = {"gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "take_along_dim"}


def _listed(ops: list[Operand]) -> str:
    return ", ".join(f"`{o.name}` {fmt_shape(o.shape)}" for o in ops)


def join_ranks(f: Failure) -> Found:
    """torch.cat / stack of tensors with different numbers of dimensions, or of 0-d tensors."""
    if short_name(f.op) not in _JOIN or len(f.operands) < 2:
        return None
    parts = [o for o in f.operands if o.device != "numpy"]
    scalars = [o for o in parts if not o.shape]
    if scalars and short_name(f.op) != "stack":
        return ((f"{f.op} joins tensors along an existing dimension, but {_listed(scalars[:2])} "
                 f"{'is a 0-d tensor' if len(scalars) == 1 else 'are 0-d tensors'} (a single number, such as a "
                 f"loss or an accuracy from .mean()), which has none.",
                 f"{f.op} 沿已有的维度拼接张量，但 {_listed(scalars[:2])} 是 0 维张量（单个数，例如 .mean() 得到的损失或准确率），"
                 f"没有可以拼接的维度。"),
                ("use torch.stack(values) to make a 1-D tensor of them (or torch.tensor([v.item() for v in values]))",
                 "改用 torch.stack(values) 把它们排成一维张量（或 torch.tensor([v.item() for v in values])）"))
    ranks = {len(o.shape) for o in parts}
    if len(ranks) < 2:
        return None
    low, high = min(parts, key=lambda o: len(o.shape)), max(parts, key=lambda o: len(o.shape))
    ones = [i for i, n in enumerate(high.shape) if n == 1]
    hint = (f"`{high.name}`.squeeze({ones[0]})" if ones and len(high.shape) - 1 == len(low.shape)
            else f"`{low.name}`.unsqueeze(...)")
    return ((f"{f.op} needs tensors with the same number of dimensions, but got {_listed(parts)}.",
             f"{f.op} 要求张量的维数相同，却得到 {_listed(parts)}。"),
            (f"give them the same number of dimensions before joining, e.g. {hint}; print the shapes to see which "
             f"axis is extra", f"拼接前让它们的维数一致，例如 {hint}；打印形状看哪一维是多出来的"))


def _spatial_dims(f: Failure) -> int | None:
    """How many spatial axes the operation works on (2 for max_pool2d / nn.Conv2d / a 2-D resize), else None."""
    name = type(f.module).__name__ if f.module is not None else short_name(f.op).lstrip("_")
    m = _SPATIAL.search(name)
    if m:
        return int(m.group(1))
    if name in ("interpolate", "upsample", "Upsample"):
        size = f.value("size", "scale_factor")
        if isinstance(size, (tuple, list)):
            return len(size)
    return None


def spatial_rank(f: Failure) -> Found:
    """A pooling, convolution or resize given fewer (or more) axes than (batch, channels, *spatial)."""
    k = _spatial_dims(f)
    x = f.operands[0] if f.operands else None
    if k is None or x is None or x.device == "numpy":
        return None
    want = k + 2
    batched_only = "interpolate" in (f.op or "") or "Upsample" in (f.op or "")
    if len(x.shape) == want or (len(x.shape) == want - 1 and not batched_only):
        return None
    fewer = len(x.shape) < want
    missing = want - len(x.shape)
    axes = ", ".join(["N", "C", *("D", "H", "W")[3 - k:]])
    fix = ((f"add the missing axes: {x.name}[None]" + ("[None]" * (missing - 1)) + f" makes it {want}-D "
            f"(unsqueeze(0) adds the batch axis); take them off the result afterwards")
           if fewer else f"remove the extra axis with squeeze(...) or reshape to ({axes})")
    fix_zh = ((f"补上缺少的维度：{x.name}[None]" + ("[None]" * (missing - 1)) + f" 变成 {want} 维（unsqueeze(0) 加上 batch 维）；"
               f"之后再从结果中去掉") if fewer else f"用 squeeze(...) 去掉多出的维度，或 reshape 成 ({axes})")
    return ((f"{f.op} works on {k}-D data laid out as ({axes}), {want} dimensions, but `{x.name}` has shape "
             f"{fmt_shape(x.shape)} ({len(x.shape)}-D): " + ("the batch (and channel) axes are missing." if fewer
                                                              else "it has an axis too many."),
             f"{f.op} 处理排列为 ({axes}) 的 {k} 维数据，共 {want} 个维度，但 `{x.name}` 的形状是 {fmt_shape(x.shape)}"
             f"（{len(x.shape)} 维）：" + ("缺少 batch（和通道）维。" if fewer else "多了一个维度。")),
            (fix, fix_zh))


_VALUE_HINT = re.compile(r"\{\[([\d, ]*)\]\}|value tensor of shape \[([\d, ]*)\]")


def set_slot(f: Failure) -> Found:
    """``x[...] = value`` where the value does not fit the indexed slot."""
    if not (f.op or "").startswith("assignment to ") or not (f.op or "").endswith("]"):
        return None
    slot = next((o for o in f.operands if o.name.endswith("]")), None)
    value = next((o for o in f.operands[1:] if o is not slot and not o.name.endswith("]")), None)
    if slot is None:
        return None
    shape = value.shape if value is not None else None
    if shape is None:  # the value was computed on that line: its shape is read from the message (a hint)
        m = _VALUE_HINT.search(f.message)
        if not m:
            return None
        shape = tuple(int(v) for v in (m.group(1) or m.group(2) or "").replace(" ", "").split(",") if v)
    if tuple(shape) == tuple(slot.shape):
        return None  # the shapes fit: something else failed (a dtype, a device)
    if math.prod(shape) == math.prod(slot.shape):
        ones = [i for i, n in enumerate(shape) if n == 1]
        squeeze = bool(ones) and len(shape) == len(slot.shape) + 1
        how = f".squeeze({ones[0]})" if squeeze else f".reshape{fmt_shape(slot.shape)}"
        why = (" (an extra size-1 axis)", "（多了一个大小为 1 的维度）") if squeeze else ("", "")
        return ((f"The value {fmt_shape(shape)} has as many elements as the slot `{slot.name}` "
                 f"{fmt_shape(slot.shape)}, but not its shape{why[0]}.",
                 f"要写入的值 {fmt_shape(shape)} 与位置 `{slot.name}` {fmt_shape(slot.shape)} 的元素个数相同，"
                 f"形状却不同{why[1]}。"),
                (f"make the value the slot's shape: add {how} to what is written into `{slot.name}`",
                 f"把值变成该位置的形状：给写入 `{slot.name}` 的值加上 {how}"))
    return ((f"The value has {math.prod(shape)} elements {fmt_shape(shape)}, but the slot `{slot.name}` it is "
             f"written into holds {math.prod(slot.shape)} {fmt_shape(slot.shape)}.",
             f"要写入的值有 {math.prod(shape)} 个元素 {fmt_shape(shape)}，而写入位置 `{slot.name}` 只容纳 "
             f"{math.prod(slot.shape)} 个 {fmt_shape(slot.shape)}。"),
            ("index as many slots as there are values (or select as many values as slots); print both shapes",
             "索引出与值个数相同的位置（或只取与位置个数相同的值）；打印两者的形状核对"))


def index_rank(f: Failure) -> Found:
    """gather / scatter with an index of another rank than the input."""
    if short_name(f.op) not in _INDEXED or len(f.operands) < 2:
        return None
    x = f.operands[0]
    index = next((o for o in f.operands[1:] if o.dtype.startswith("int")), None)
    if index is None or len(index.shape) == len(x.shape):
        return None
    dim = next((v.value for v in f.values if isinstance(v.value, int) and not isinstance(v.value, bool)), 1)
    return ((f"{short_name(f.op)} needs an index with as many dimensions as its input, but `{x.name}` is "
             f"{fmt_shape(x.shape)} and `{index.name}` is {fmt_shape(index.shape)}.",
             f"{short_name(f.op)} 要求索引的维数与输入相同，但 `{x.name}` 是 {fmt_shape(x.shape)}，`{index.name}` 是 "
             f"{fmt_shape(index.shape)}。"),
            (f"give the index the missing axis: {index.name}.unsqueeze({dim}), and .squeeze({dim}) the result",
             f"给索引补上缺少的维度：{index.name}.unsqueeze({dim})，再对结果 .squeeze({dim})"))


def rnn_state(f: Failure) -> Found:
    """An initial RNN / LSTM / GRU state whose rank does not match the input's."""
    m = f.module
    if not isinstance(m, nn.RNNBase) or not f.operands:
        return None
    x = f.operands[0]
    states = [o for o in f.operands if o.name.startswith("hx")]
    want = len(x.shape)
    wrong = [o for o in states if len(o.shape) != want]
    if not wrong or want not in (2, 3):
        return None
    layers = m.num_layers * (2 if m.bidirectional else 1)
    batch = x.shape[0 if m.batch_first else 1] if want == 3 else None
    shape = f"({layers}, {batch}, {m.hidden_size})" if batch is not None else f"({layers}, {m.hidden_size})"
    return ((f"The initial state must be {shape} (num_layers * directions, batch, hidden) for the {want}-D input "
             f"`{x.name}` {fmt_shape(x.shape)}, but got {_listed(wrong)}; the state keeps its layer axis first even "
             f"with batch_first=True.",
             f"对 {want} 维输入 `{x.name}` {fmt_shape(x.shape)}，初始状态必须是 {shape}（层数×方向数, batch, 隐藏维），"
             f"却得到 {_listed(wrong)}；即使 batch_first=True，状态的第一维仍是层。"),
            ("add the layer axis: h = h.unsqueeze(0) (for num_layers=1), or h.view(num_layers * directions, batch, "
             "hidden); pass both h and c for an LSTM",
             "补上层的维度：h = h.unsqueeze(0)（num_layers=1 时），或 h.view(层数×方向数, batch, 隐藏维)；LSTM 要同时传 h 和 c"))


def class_weight(f: Failure) -> Found:
    """A loss's per-class weight whose length is not the number of classes."""
    short = short_name(f.op)
    if not (short in ("cross_entropy", "nll_loss") or (f.op or "").startswith(("nn.CrossEntropyLoss",
                                                                                "nn.NLLLoss"))):
        return None
    x, w = f.operand("input"), f.operand("weight")
    if x is None or w is None or not x.shape:
        return None
    classes = x.shape[1] if len(x.shape) >= 2 else x.shape[0]
    if math.prod(w.shape) == classes and len(w.shape) == 1:
        return None
    return ((f"The class weights `{w.name}` {fmt_shape(w.shape)} must be one number per class, but the scores "
             f"`{x.name}` {fmt_shape(x.shape)} have {classes} classes.",
             f"类别权重 `{w.name}` {fmt_shape(w.shape)} 必须每个类别一个数，但得分 `{x.name}` {fmt_shape(x.shape)} 有 "
             f"{classes} 个类别。"),
            (f"give a 1-D weight of length {classes}, e.g. counts = torch.bincount(y, minlength={classes}); "
             f"weight = counts.sum() / counts.clamp(min=1)",
             f"给一个长度为 {classes} 的一维权重，例如 counts = torch.bincount(y, minlength={classes})；"
             f"weight = counts.sum() / counts.clamp(min=1)"))


def single_sample_norm(f: Failure) -> Found:
    """BatchNorm in training mode given one value per channel (a batch of one sample)."""
    m = f.module
    if not isinstance(m, nn.modules.batchnorm._BatchNorm) or not m.training or not f.operands:
        return None
    x = f.operands[0]
    if len(x.shape) < 2 or math.prod(x.shape) // max(x.shape[1], 1) != 1:
        return None
    return ((f"Batch norm in training mode averages each channel over the batch, but `{x.name}` "
             f"{fmt_shape(x.shape)} is a single sample: usually the last, smaller batch of an epoch, or one "
             f"sample predicted while the model is still in training mode.",
             f"训练模式下的 BatchNorm 在 batch 上对每个通道求平均，但 `{x.name}` {fmt_shape(x.shape)} 只有一个样本："
             f"通常是一个 epoch 最后那个不满的 batch，或者模型仍处于训练模式时预测单个样本。"),
            ("drop the incomplete last batch: DataLoader(..., drop_last=True); call model.eval() before predicting "
             "one sample", "丢掉最后不满的 batch：DataLoader(..., drop_last=True)；预测单个样本前调用 model.eval()"))


def attention_mask(f: Failure) -> Found:
    """An attention mask built for another sequence length."""
    m = f.module
    if not isinstance(m, nn.MultiheadAttention):
        return None
    q, k, mask = f.operand("query"), f.operand("key"), f.operand("attn_mask")
    if q is None or mask is None or len(q.shape) < 2 or len(mask.shape) < 2:
        return None
    k = k or q
    seq = 1 if m.batch_first and len(q.shape) == 3 else 0
    want = (q.shape[seq], k.shape[seq])
    if tuple(mask.shape[-2:]) == want:
        return None
    return ((f"The attention mask `{mask.name}` is {fmt_shape(mask.shape)}, built for another length: for "
             f"queries of length {want[0]} and keys of length {want[1]} it must be {fmt_shape(want)}"
             f"{' (the sequence axis is first unless batch_first=True)' if not m.batch_first else ''}.",
             f"注意力掩码 `{mask.name}` 的形状是 {fmt_shape(mask.shape)}，是按另一个长度构造的：查询长度 {want[0]}、键长度 "
             f"{want[1]} 时它必须是 {fmt_shape(want)}{'（除非 batch_first=True，序列维在最前）' if not m.batch_first else ''}。"),
            (f"build the mask from the current lengths, e.g. torch.triu(torch.ones({want[0]}, {want[1]}, "
             f"dtype=torch.bool), diagonal=1)",
             f"按当前长度构造掩码，例如 torch.triu(torch.ones({want[0]}, {want[1]}, dtype=torch.bool), diagonal=1)"))


def k_too_large(f: Failure) -> Found:
    """topk / kthvalue asked for more elements than the dimension has."""
    if short_name(f.op) not in ("topk", "kthvalue") or not f.operands:
        return None
    x = f.operands[0]
    ints = [v.value for v in f.values if isinstance(v.value, int) and not isinstance(v.value, bool)]
    k = f.value("k") if isinstance(f.value("k"), int) else (ints[0] if ints else None)
    dim = f.value("dim") if isinstance(f.value("dim"), int) else (ints[1] if len(ints) > 1 else -1)
    if k is None or not x.shape or not -len(x.shape) <= dim < len(x.shape) or k <= x.shape[dim]:
        return None
    size = x.shape[dim]
    return ((f"{short_name(f.op)} asked for k={k} elements along dimension {dim} of `{x.name}` {fmt_shape(x.shape)}, "
             f"which has only {size} (for example top-{k} accuracy on a model with {size} classes).",
             f"{short_name(f.op)} 要在 `{x.name}` {fmt_shape(x.shape)} 的第 {dim} 维取 k={k} 个元素，而这一维只有 {size} 个"
             f"（例如在只有 {size} 个类别的模型上算 top-{k} 准确率）。"),
            (f"keep k within the size: k = min({k}, {x.name}.shape[{dim}]), e.g. topk=(1,) when there are fewer "
             f"than {k} classes", f"让 k 不超过该维大小：k = min({k}, {x.name}.shape[{dim}])，类别少于 {k} 个时例如用 topk=(1,)"))


RULES = [join_ranks, spatial_rank, set_slot, index_rank, rnn_state, class_weight, single_sample_norm,
         attention_mask, k_too_large]
