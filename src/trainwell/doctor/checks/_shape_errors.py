"""Explainers for shape errors: matmul, conv, RNN, norm, loss targets, view / stack / cat."""

from __future__ import annotations

import re
from typing import Any

from torch import nn

from trainwell.doctor.checks._error_parsing import (Context, Parsed, fmt, has_conv, ints,
                                                    shape, square_side)
from trainwell.doctor.checks._error_base import Explanation, ErrorCheck, _CONV, _NORM, _prod
from trainwell.doctor.checks._op_errors import on_line
from trainwell.doctor.checks._batch_first import TimeMajor, time_major_input


def _time_major(ctx: Context, chk: ErrorCheck, rows: int, wanted: int) -> TimeMajor | None:
    """A non-batch_first RNN read the batch as time, when this error's ``rows`` are its seq length where
    ``wanted`` (its batch) was expected."""
    tm = time_major_input(ctx, getattr(chk, "time_major", None))  # shape-mismatch remembers the last one seen
    return tm if tm is not None and (rows, wanted) == (tm.seq, tm.batch) else None


def _matmul(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    a, b, c, d = (int(v) for v in p.groups)
    lin = ctx.failing if isinstance(ctx.failing, nn.Linear) and ctx.failing.in_features == c else None
    ev = {"mat1": [a, b], "mat2": [c, d]}
    if lin is None:
        shown = on_line(ctx)
        return Explanation(
            (f"A matrix product got a ({a}x{b}) and a ({c}x{d}) matrix; the inner sizes {b} and {c} must be "
             f"equal.{shown[0]}", f"矩阵乘法得到了 ({a}x{b}) 和 ({c}x{d}) 两个矩阵，中间的两个大小 {b} 和 {c} 必须相等。{shown[1]}"),
            ("print both shapes just before that line and make them agree, e.g. transpose one: y = x @ w.T",
             "在那一行之前打印两个张量的形状并让它们一致，例如转置其中一个：y = x @ w.T"), ev)
    out, s = lin.out_features, shape(ctx.module_input(lin))
    ev.update(expected_in_features=c, got_features=b, input_shape=s)
    if s and len(s) > 2:
        flat = _prod(s[1:])
        if flat == c:
            return Explanation(
                (f"This Linear expects {c} features per sample but received a tensor of shape {fmt(s)}: it was not "
                 f"flattened (a Flatten is missing), so the layer only saw its last dimension ({b}).",
                 f"这个 Linear 期望每个样本有 {c} 个特征，但收到的张量形状是 {fmt(s)}：没有展平（缺少 Flatten），"
                 f"所以这一层只看到了最后一维（{b}）。"),
                ("flatten it before the layer: x = torch.flatten(x, 1)  # or put nn.Flatten() before the Linear",
                 "在这一层之前展平：x = torch.flatten(x, 1)  # 或在 Linear 前加 nn.Flatten()"), ev)
        if len(s) == 3:
            return Explanation(
                (f"This Linear expects {c} input features but received shape {fmt(s)}; a Linear works on the last "
                 f"dimension only, which is {b}.",
                 f"这个 Linear 期望 {c} 个输入特征，但收到的形状是 {fmt(s)}；Linear 只作用在最后一维上，而最后一维是 {b}。"),
                (f"if each sample should be one flat vector, flatten it and size the layer: x = torch.flatten(x, 1) "
                 f"with nn.Linear({flat}, {out}); if the last dimension holds the features, use nn.Linear({b}, {out})",
                 f"如果每个样本应是一个向量，先展平再设定层的大小：x = torch.flatten(x, 1)，配 nn.Linear({flat}, {out})；"
                 f"如果最后一维就是特征，用 nn.Linear({b}, {out})"), ev)
        return Explanation(
            (f"This Linear expects {c} features per sample but received feature maps of shape {fmt(s)}: they were "
             f"not flattened (a Flatten is missing), and flattened they hold {flat} values per sample, not {c}.",
             f"这个 Linear 期望每个样本有 {c} 个特征，但收到的是形状为 {fmt(s)} 的特征图：没有展平（缺少 Flatten），"
             f"展平后每个样本有 {flat} 个值，而不是 {c}。"),
            (f"flatten and size the layer to match: x = torch.flatten(x, 1) with nn.Linear({flat}, {out})  "
             f"# or nn.LazyLinear({out}), which infers in_features",
             f"展平并让层的大小一致：x = torch.flatten(x, 1)，配 nn.Linear({flat}, {out})  "
             f"# 或用 nn.LazyLinear({out}) 自动推断 in_features"), ev)
    conv = has_conv(ctx.modules[0] if ctx.modules else None)
    cause = ((" The size of the flattened conv / pooling output was computed wrongly when the layer was built.",
              "建这一层时，卷积 / 池化输出展平后的大小算错了。") if conv else
             (" The layer's size does not match the data or the previous layer.", "这一层的大小与数据或上一层的输出不一致。"))
    if a == c and b != c:
        cause = (cause[0] + f" The input may also be transposed: its first dimension ({a}) equals in_features.",
                 cause[1] + f"输入也可能被转置了：它的第一维（{a}）正好等于 in_features。")
    return Explanation(
        (f"This Linear was built for {c} input features (in_features={c}) but the input has {b} features per sample "
         f"(shape {fmt(s or (a, b))}).{cause[0]}",
         f"这个 Linear 是按 {c} 个输入特征（in_features={c}）建的，但输入每个样本有 {b} 个特征"
         f"（形状 {fmt(s or (a, b))}）。{cause[1]}"),
        (f"build the layer for the real size: nn.Linear({b}, {out})  # or nn.LazyLinear({out}) infers it; "
         f"print(x.shape) before the layer (or run `trainwell summary`) to see every size",
         f"按实际大小建这一层：nn.Linear({b}, {out})  # 或用 nn.LazyLinear({out}) 自动推断；"
         f"在这一层前 print(x.shape)（或运行 `trainwell summary`）查看每一层的大小"), ev)


_DIMS = {3: ("length", "长度"), 4: ("height, width", "高, 宽"), 5: ("depth, height, width", "深, 高, 宽")}


def _conv_rank(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    conv = ctx.innermost((_CONV,))
    nd, s = int(p.groups[0]), ints(p.groups[2])
    op = p.groups[1] or f"conv{nd - 2}d"
    ch = conv.in_channels if isinstance(conv, _CONV) else 1
    dims = _DIMS.get(nd, ("...", "..."))
    ev = {"input_shape": s, "expected_dims": nd}
    head = (f"{op} needs input shaped (batch, channels, {dims[0]}) but got {fmt(s)}",
            f"{op} 需要形状为 (batch, 通道, {dims[1]}) 的输入，但得到的是 {fmt(s)}")
    if len(s) < nd - 1:
        side = square_side(s[-1] // ch) if nd == 4 and s and s[-1] % ch == 0 else None
        fix = ((f"reshape to images before the conv layers: x = x.view(-1, {ch}, {side}, {side})",
                f"在卷积层之前还原成图像形状：x = x.view(-1, {ch}, {side}, {side})") if side else
               ("reshape to (batch, channels, ...) before the conv layers, e.g. x = x.unsqueeze(1)  # add channels",
                "在卷积层之前改成 (batch, 通道, ...) 的形状，例如 x = x.unsqueeze(1)  # 加上通道维"))
        return Explanation((head[0] + ": the images were flattened into vectors, or the channel dimension is missing.",
                            head[1] + "：图像被展平成了向量，或者缺少通道维。"), fix, ev)
    ones = [i for i, v in enumerate(s) if v == 1 and i > 0]
    fix = ((f"remove the extra dimension: x = x.squeeze({ones[0]})", f"去掉多余的维度：x = x.squeeze({ones[0]})") if ones
           else ("reshape to (batch, channels, ...): x = x.flatten(0, 1)  # merge the extra dimension into the batch",
                 "改成 (batch, 通道, ...) 的形状：x = x.flatten(0, 1)  # 把多余的维度并入 batch"))
    return Explanation((head[0] + ", which has an extra dimension.", head[1] + "，多了一个维度。"), fix, ev)


_PERMUTE = {3: "x.transpose(1, 2)", 4: "x.permute(0, 3, 1, 2)", 5: "x.permute(0, 4, 1, 2, 3)"}


def _conv_channels(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    w, seen, want, got = ints(p.groups[0]), ints(p.groups[1]), int(p.groups[2]), int(p.groups[3])
    conv = ctx.innermost((_CONV,))
    s = shape(ctx.module_input(conv)) or seen
    nd, kind = len(w), type(conv).__name__ if conv is not None else "Conv2d"
    out = conv.out_channels if isinstance(conv, _CONV) else w[0]
    ev = {"expected_channels": want, "got_channels": got, "input_shape": s, "weight_shape": w}
    if len(s) == nd - 1 and s[0] == got and want == 1:
        return Explanation(
            (f"It expects {want} input channel but got a tensor of shape {fmt(s)} with no channel dimension, so the "
             f"batch of {got} was read as one sample with {got} channels.",
             f"它期望 {want} 个输入通道，但收到的张量形状是 {fmt(s)}，没有通道维，于是 {got} 个样本的 batch "
             f"被当成了一个有 {got} 个通道的样本。"),
            ("add the channel dimension: x = x.unsqueeze(1)  # (batch, H, W) -> (batch, 1, H, W)",
             "加上通道维：x = x.unsqueeze(1)  # (batch, H, W) -> (batch, 1, H, W)"), ev)
    if len(s) == nd and s[-1] == want and nd in _PERMUTE:
        return Explanation(
            (f"It expects {want} channels in dimension 1, but the input {fmt(s)} has its channels last (how NumPy / "
             f"PIL images and (batch, length, features) sequences are stored), so dimension 1 ({got}) was read as "
             f"the channels.",
             f"它期望第 1 维是 {want} 个通道，但输入 {fmt(s)} 的通道在最后一维（NumPy / PIL 图像和 "
             f"(batch, 长度, 特征) 序列都是这样存的），于是第 1 维（{got}）被当成了通道数。"),
            (f"move the channels to dimension 1: x = {_PERMUTE[nd]}", f"把通道移到第 1 维：x = {_PERMUTE[nd]}"), ev)
    if want == 3 and got == 1:
        return Explanation(
            ("The layer expects 3-channel (RGB) images but got 1-channel (grayscale) images.",
             "这一层期望 3 通道（RGB）图像，但得到的是 1 通道（灰度）图像。"),
            (f"build it with in_channels=1: nn.{kind}(1, {out}, ...), or repeat the channel: x = x.repeat(1, 3, 1, 1)",
             f"用 in_channels=1 建这一层：nn.{kind}(1, {out}, ...)，或复制通道：x = x.repeat(1, 3, 1, 1)"), ev)
    return Explanation(
        (f"This layer was built for {want} input channels (in_channels={want}) but its input has {got} "
         f"(shape {fmt(s)}): the previous layer, or the data, gives {got} channels.",
         f"这一层是按 {want} 个输入通道（in_channels={want}）建的，但输入有 {got} 个通道（形状 {fmt(s)}）："
         f"上一层或数据给出的是 {got} 个通道。"),
        (f"build it for the real channel count: nn.{kind}({got}, {out}, ...)  # in_channels = out_channels of the "
         f"layer before", f"按实际通道数建这一层：nn.{kind}({got}, {out}, ...)  # in_channels = 上一层的 out_channels"),
        ev)


def _rnn_features(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    want, got = int(p.groups[0]), int(p.groups[1])
    rnn = ctx.innermost((nn.RNNBase,))
    s = shape(ctx.module_input(rnn))
    kind = type(rnn).__name__ if rnn is not None else "LSTM"
    hidden = rnn.hidden_size if isinstance(rnn, nn.RNNBase) else "hidden_size"
    ev = {"input_size": want, "got_features": got, "input_shape": s}
    if s and want in s[:-1]:
        i = max(j for j, v in enumerate(s[:-1]) if v == want)
        perm = [j for j in range(len(s)) if j != i] + [i]
        new = tuple(s[j] for j in perm)
        return Explanation(
            (f"{kind} was built with input_size={want} (features per time step) and got shape {fmt(s)}: the {want} "
             f"features are in dimension {i}, not last, so it read {got} as the feature size.",
             f"{kind} 是按 input_size={want}（每个时间步的特征数）建的，收到的形状是 {fmt(s)}：{want} 个特征在第 {i} 维，"
             f"而不在最后一维，所以它把 {got} 当成了特征数。"),
            (f"put the features last: x = x.permute{tuple(perm)}  # -> {fmt(new)}",
             f"把特征放到最后一维：x = x.permute{tuple(perm)}  # -> {fmt(new)}"), ev)
    note = ((" Without batch_first=True it reads the input as (seq_len, batch, features).",
             "没有 batch_first=True 时，它把输入当作 (seq_len, batch, 特征)。")
            if isinstance(rnn, nn.RNNBase) and not rnn.batch_first else ("", ""))
    return Explanation(
        (f"{kind} was built with input_size={want}, but each time step of the input {fmt(s)} has {got} features "
         f"(the last dimension).{note[0]}",
         f"{kind} 是按 input_size={want} 建的，但输入 {fmt(s)} 每个时间步有 {got} 个特征（最后一维）。{note[1]}"),
        (f"build it with the real feature size: nn.{kind}({got}, {hidden}, batch_first=True)  "
         f"# input_size = x.size(-1)",
         f"按实际特征数建：nn.{kind}({got}, {hidden}, batch_first=True)  # input_size = x.size(-1)"), ev)


def _rnn_rank(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    kind, nd = p.groups[0], int(p.groups[1])
    s = shape(ctx.module_input(ctx.innermost((nn.RNNBase,))))
    fix = (("drop the images' channel dimension: x = x.squeeze(1)  # (batch, 1, H, W) -> (batch, H, W): H steps of W "
            "features", "去掉图像的通道维：x = x.squeeze(1)  # (batch, 1, H, W) -> (batch, H, W)：H 个时间步，每步 W 个特征")
           if s and len(s) == 4 and s[1] == 1 else
           ("reshape to 3 dimensions (batch, seq_len, features) with batch_first=True, e.g. x = x.flatten(2)",
            "改成 3 维 (batch, seq_len, 特征) 并设 batch_first=True，例如 x = x.flatten(2)"))
    return Explanation(
        (f"{kind} takes (batch, seq_len, features) with batch_first=True, or (seq_len, batch, features), but got a "
         f"{nd}-dimensional tensor {fmt(s)}.",
         f"{kind} 接受 (batch, seq_len, 特征)（batch_first=True）或 (seq_len, batch, 特征)，但得到的是 {nd} 维张量 {fmt(s)}。"),
        fix, {"input_shape": s})


def _rnn_hidden(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    want, got = ints(p.groups[0]), ints(p.groups[1])
    tm = _time_major(ctx, chk, want[1], got[1]) if len(want) == len(got) == 3 else None
    if tm is not None:
        note = tm.note()
        return Explanation(
            (f"The initial hidden state has shape {fmt(got)} (num_layers, batch, hidden) but the {tm.kind} asks for "
             f"{fmt(want)}. {note[0]}",
             f"初始隐藏状态的形状是 {fmt(got)}（num_layers, batch, hidden），但 {tm.kind} 要求的是 {fmt(want)}。{note[1]}"),
            tm.fix(), {"expected": want, "got": got, "batch_first": False})
    return Explanation(
        (f"The initial hidden state has shape {fmt(got)} but this batch needs {fmt(want)} (num_layers, batch, "
         f"hidden): it was made for a fixed batch size, and this batch (often the last, smaller one) differs.",
         f"初始隐藏状态的形状是 {fmt(got)}，但这个 batch 需要 {fmt(want)}（num_layers, batch, hidden）："
         f"它是按固定的 batch 大小建的，而这个 batch（通常是最后一个较小的 batch）大小不同。"),
        ("build it from the input: h0 = torch.zeros(num_layers, x.size(0), hidden_size, device=x.device)  "
         "# x.size(1) without batch_first; or pass no state at all",
         "根据输入来建：h0 = torch.zeros(num_layers, x.size(0), hidden_size, device=x.device)  "
         "# 没有 batch_first 时用 x.size(1)；或干脆不传初始状态"), {"expected": want, "got": got})


def _inplace(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    out, want = ints(p.groups[0]), ints(p.groups[1])
    if ctx.through_package("torchvision"):
        return Explanation(
            (f"An in-place transform on an image of shape {fmt(out)} would produce {fmt(want)}: usually "
             f"transforms.Normalize was given one mean / std per channel for 3 channels, but the images have "
             f"{out[0] if out else '?'}.",
             f"对形状为 {fmt(out)} 的图像做原地变换会得到 {fmt(want)}：通常是给 transforms.Normalize 的 mean / std "
             f"按 3 个通道写的，而图像只有 {out[0] if out else '?'} 个通道。"),
            ("give Normalize one value per channel of the images: transforms.Normalize((0.5,), (0.5,))  # 1 channel; "
             "or convert the images: transforms.Grayscale(num_output_channels=3)",
             "按图像的通道数给 Normalize 值：transforms.Normalize((0.5,), (0.5,))  # 1 个通道；"
             "或转换图像：transforms.Grayscale(num_output_channels=3)"), {"output": out, "broadcast": want})
    return Explanation(
        (f"An in-place operation (+=, *=, .add_(), ...) on a tensor of shape {fmt(out)} would produce shape "
         f"{fmt(want)}; an in-place result cannot be larger than the tensor it is written into.",
         f"对形状为 {fmt(out)} 的张量做原地运算（+=、*=、.add_() 等）会得到形状 {fmt(want)}；原地运算的结果不能比被写入的张量大。"),
        ("write it out of place, or fix the shapes: x = x + other  # instead of x += other",
         "改成非原地运算，或修正形状：x = x + other  # 而不是 x += other"), {"output": out, "broadcast": want})


def _batch_size(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    n_in, n_t = int(p.groups[0]), int(p.groups[1])
    inp, tgt = ctx.loss_tensors()
    last = chk.session.last_forward  # (batch in, output shape) of the last model call
    ev = {"predictions": n_in, "targets": n_t, "prediction_shape": shape(inp), "target_shape": shape(tgt)}
    tm = _time_major(ctx, chk, n_in, n_t)
    if tm is not None:
        note = tm.note()
        return Explanation(
            (f"The loss got {n_in} predictions (shape {fmt(shape(inp))}) but {n_t} targets. {note[0]}",
             f"损失函数收到 {n_in} 个预测（形状 {fmt(shape(inp))}），但有 {n_t} 个目标。{note[1]}"),
            tm.fix(), {**ev, "batch_first": False})
    if last and last[0] == n_t and last[1][:1] == (n_in,):
        cause = (f" The model received a batch of {n_t} samples and returned {n_in} rows (output {fmt(last[1])}): its "
                 f"forward mixes the batch and feature dimensions, usually x.view(-1, N) with the wrong N.",
                 f"模型收到 {n_t} 个样本，却返回了 {n_in} 行（输出 {fmt(last[1])}）：它的 forward 把 batch 维和特征维混在了一起，"
                 f"通常是 x.view(-1, N) 里的 N 写错了。")
    else:
        cause = (" Usually the forward pass reshapes with a wrong size (x.view(-1, N) with the wrong N, mixing batch "
                 "and features), or the predictions and the labels come from different batches.",
                 "通常是前向传播里用错误的大小改了形状（x.view(-1, N) 的 N 写错，把 batch 和特征混在一起），"
                 "或者预测和标签来自不同的 batch。")
    return Explanation(
        (f"The loss got {n_in} predictions (shape {fmt(shape(inp))}) but {n_t} targets; it needs one prediction per "
         f"target.{cause[0]}",
         f"损失函数收到 {n_in} 个预测（形状 {fmt(shape(inp))}），但有 {n_t} 个目标；每个目标需要对应一个预测。{cause[1]}"),
        ("keep the batch dimension when flattening: x = torch.flatten(x, 1)  # or x.view(x.size(0), -1); then set the "
         "next Linear's in_features to match",
         "展平时保留 batch 维：x = torch.flatten(x, 1)  # 或 x.view(x.size(0), -1)；再让下一个 Linear 的 in_features 与之一致"),
        ev)


def _state_dict(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    text = p.text
    sizes = re.findall(r"size mismatch for ([\w.]+): copying a param with shape torch\.Size\(\[([\d, ]*)\]\) from "
                       r"checkpoint, the shape in current model is torch\.Size\(\[([\d, ]*)\]\)", text)
    missing = re.findall(r'"([^"]+)"', text.split("Missing key(s) in state_dict:")[1].split("Unexpected")[0]) \
        if "Missing key(s)" in text else []
    unexpected = re.findall(r'"([^"]+)"', text.split("Unexpected key(s) in state_dict:")[1].split("size mismatch")[0]) \
        if "Unexpected key(s)" in text else []
    ev = {"model": p.groups[0], "size_mismatches": len(sizes), "missing": missing[:5], "unexpected": unexpected[:5]}
    place = (" while loading a checkpoint into " + p.groups[0], f"（把检查点加载到 {p.groups[0]} 时）")
    for prefix in ("module.", "_orig_mod."):
        wrapper = "nn.DataParallel / DistributedDataParallel" if prefix == "module." else "torch.compile"
        if unexpected and all(k.startswith(prefix) for k in unexpected):
            return Explanation(
                (f"Every key in the checkpoint starts with '{prefix}' while the model's keys do not: it was saved from "
                 f"a wrapped model ({wrapper}).",
                 f"检查点里的每个键都以 '{prefix}' 开头，而模型的键没有：它是从包装过的模型"
                 f"（{wrapper}）保存的。"),
                (f"strip the prefix: state = {{k.removeprefix('{prefix}'): v for k, v in state.items()}}; "
                 f"model.load_state_dict(state)",
                 f"去掉前缀：state = {{k.removeprefix('{prefix}'): v for k, v in state.items()}}; "
                 f"model.load_state_dict(state)"),
                ev, place)
    if unexpected and missing and all("." not in k for k in unexpected):
        return Explanation(
            (f"The object loaded is a training checkpoint (keys {', '.join(unexpected[:4])}), not the model's "
             f"state_dict itself, so none of the model's weights were found.",
             f"加载的是训练检查点（键 {', '.join(unexpected[:4])}），不是模型本身的 state_dict，所以一个模型权重也找不到。"),
            (f"load the model's entry: model.load_state_dict(ckpt[{unexpected[0]!r}])",
             f"加载其中模型那一项：model.load_state_dict(ckpt[{unexpected[0]!r}])"), ev, place)
    if sizes:
        en = "; ".join(f"`{k}`: checkpoint {fmt(ints(a))} vs model {fmt(ints(b))}" for k, a, b in sizes[:3])
        zh = "；".join(f"`{k}`：检查点 {fmt(ints(a))}，模型 {fmt(ints(b))}" for k, a, b in sizes[:3])
        keys = "{" + ", ".join(repr(k) for k, _, _ in sizes[:4]) + "}"
        return Explanation(
            (f"The checkpoint comes from a model built with different sizes ({en}), e.g. another number of classes "
             f"or hidden units.", f"检查点来自按不同大小建的模型（{zh}），例如类别数或隐藏单元数不同。"),
            (f"build the model with the sizes it was saved with; to fine-tune with new layers, drop them: state = "
             f"{{k: v for k, v in state.items() if k not in {keys}}}; model.load_state_dict(state, strict=False)",
             f"按保存时的大小建模型；如果要换掉这些层再微调，就丢掉它们：state = "
             f"{{k: v for k, v in state.items() if k not in {keys}}}; model.load_state_dict(state, strict=False)"),
            ev, place)
    return Explanation(
        (f"The layer names differ between the checkpoint and this model ({len(missing)} missing, e.g. "
         f"{', '.join(missing[:3]) or '-'}; {len(unexpected)} unexpected, e.g. {', '.join(unexpected[:3]) or '-'}): "
         f"it was saved from a different model class or version.",
         f"检查点和这个模型的层名不一致（缺少 {len(missing)} 个，例如 {', '.join(missing[:3]) or '-'}；"
         f"多出 {len(unexpected)} 个，例如 {', '.join(unexpected[:3]) or '-'}）：它是从不同的模型类或版本保存的。"),
        ("load it into the same architecture it was saved from; if only some parts are shared, use "
         "model.load_state_dict(state, strict=False) and check the missing_keys it returns",
         "加载到保存时的同一个模型结构里；如果只有部分相同，用 model.load_state_dict(state, strict=False)，"
         "并检查它返回的 missing_keys"), ev, place)


def _broadcast(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    a, b, dim = (int(v) for v in p.groups)
    inp, tgt = ctx.loss_tensors()
    ev: dict[str, Any] = {"size_a": a, "size_b": b, "dim": dim}
    if inp is not None and tgt is not None:
        si, st = tuple(inp.shape), tuple(tgt.shape)
        ev.update(prediction_shape=si, target_shape=st)
        head = (f"The loss compares a prediction of shape {fmt(si)} with a target of shape {fmt(st)}; they must have "
                f"the same shape.", f"损失函数在比较形状为 {fmt(si)} 的预测和形状为 {fmt(st)} 的目标；两者形状必须相同。")
        if inp.numel() == tgt.numel():
            fix = ("give the target the prediction's shape: loss = loss_fn(out, y.view_as(out))",
                   "让目标和预测形状一致：loss = loss_fn(out, y.view_as(out))")
        elif si[:1] != st[:1]:
            head = (head[0] + " Even the batch sizes differ: the forward pass mixes batch and features "
                    "(x.view(-1, N) with the wrong N) or the targets come from another batch.",
                    head[1] + "连 batch 大小都不同：前向传播把 batch 和特征混在了一起（x.view(-1, N) 的 N 写错），"
                    "或者目标来自另一个 batch。")
            fix = ("keep the batch dimension when flattening: x = torch.flatten(x, 1); then compare same shapes",
                   "展平时保留 batch 维：x = torch.flatten(x, 1)；然后比较形状相同的张量")
        else:
            n = _prod(st[1:])
            fix = (f"make the model output what the target holds per sample ({n} value(s)): the last layer's "
                   f"out_features={n}, then loss = loss_fn(out, y.view_as(out))",
                   f"让模型每个样本输出与目标相同数量的值（{n} 个）：最后一层 out_features={n}，"
                   f"然后 loss = loss_fn(out, y.view_as(out))")
        return Explanation(head, fix, ev)
    inside = ((f" It happened inside `{ctx.name_of(ctx.failing)}`: e.g. a skip / residual connection whose two "
               f"branches differ in size.", f"出错位置在 `{ctx.name_of(ctx.failing)}` 里面：例如残差 / 跳跃连接两条支路的大小不同。")
              if ctx.name_of(ctx.failing) else ("", ""))
    return Explanation(
        (f"Two tensors combined element-wise (+, -, *, /) have sizes {a} and {b} in dimension {dim}; sizes must be "
         f"equal (or 1) to broadcast.{inside[0]}",
         f"两个做逐元素运算（+、-、*、/）的张量在第 {dim} 维的大小是 {a} 和 {b}；要广播，大小必须相等（或为 1）。{inside[1]}"),
        ("print both shapes before that line (print(a.shape, b.shape)) and make them match, e.g. project a skip "
         "connection with a 1x1 conv / Linear, or use .view / .unsqueeze for the intended layout",
         "在那一行之前打印两个形状（print(a.shape, b.shape)）并让它们一致，例如用 1x1 卷积 / Linear 投影跳跃连接，"
         "或用 .view / .unsqueeze 得到想要的布局"), ev)


def _norm_features(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    got, want = int(p.groups[0]), int(p.groups[1])
    norm = ctx.innermost((_NORM,))
    kind = type(norm).__name__ if norm is not None else "BatchNorm2d"
    return Explanation(
        (f"{kind} was built for {want} channels / features (num_features={want}) but its input has {got}.",
         f"{kind} 是按 {want} 个通道 / 特征（num_features={want}）建的，但输入有 {got} 个。"),
        (f"build it for the real size: nn.{kind}({got})  # num_features = channels of the layer before",
         f"按实际大小建：nn.{kind}({got})  # num_features = 上一层的通道数"), {"num_features": want, "got": got})


def _norm_rank(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    want, got = p.groups[0], p.groups[1]
    norm = ctx.innermost((_NORM,))
    kind = type(norm).__name__ if norm is not None else "BatchNorm"
    s = shape(ctx.module_input(norm))
    use = {"2": "BatchNorm1d", "3": "BatchNorm1d", "4": "BatchNorm2d", "5": "BatchNorm3d"}.get(got, "BatchNorm1d")
    size = s[1] if s and len(s) > 1 else "num_features"
    return Explanation(
        (f"{kind} expects {want} input but got a {got}D tensor {fmt(s)}: the normalization layer does not match the "
         f"data's layout.", f"{kind} 需要 {want} 的输入，但得到的是 {got}D 张量 {fmt(s)}：归一化层与数据的布局不匹配。"),
        (f"use the variant for this layout: nn.{use}({size})", f"换成适合这种布局的版本：nn.{use}({size})"),
        {"input_shape": s})


def _layer_norm(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    want, s = ints(p.groups[0]), ints(p.groups[1])
    new = s[-len(want):] if want and len(s) >= len(want) else s[-1:]
    arg = str(new[0]) if len(new) == 1 else str(list(new))
    return Explanation(
        (f"LayerNorm normalizes the last dimension(s), built as normalized_shape={list(want)}, but the input has shape "
         f"{fmt(s)}.", f"LayerNorm 对最后的维度做归一化，建的是 normalized_shape={list(want)}，但输入形状是 {fmt(s)}。"),
        (f"build it for the input's last dimension(s): nn.LayerNorm({arg})",
         f"按输入的最后维度建：nn.LayerNorm({arg})"), {"normalized_shape": want, "input_shape": s})


def _target_size(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    st, si = ints(p.groups[0]), ints(p.groups[1])
    if si == st + (1,):
        fix = ("drop the output's extra dimension: loss = loss_fn(out.squeeze(1), y.float())  "
               "# or y.float().unsqueeze(1)",
               "去掉输出多余的维度：loss = loss_fn(out.squeeze(1), y.float())  # 或 y.float().unsqueeze(1)")
    elif _prod(si) == _prod(st):
        fix = ("give the target the prediction's shape: loss = loss_fn(out, y.float().view_as(out))",
               "让目标和预测形状一致：loss = loss_fn(out, y.float().view_as(out))")
    else:
        fix = ("for 0/1 labels give the model one output (nn.Linear(..., 1)) with BCEWithLogitsLoss; for class indices "
               "use num_classes outputs with CrossEntropyLoss",
               "0/1 标签：模型只输出 1 个值（nn.Linear(..., 1)），配 BCEWithLogitsLoss；类别索引：输出 num_classes 个值，配 "
               "CrossEntropyLoss")
    return Explanation(
        (f"Binary cross-entropy needs the target in the same shape as the prediction, but the prediction is {fmt(si)} "
         f"and the target {fmt(st)}.", f"二分类交叉熵要求目标与预测形状相同，但预测是 {fmt(si)}，目标是 {fmt(st)}。"),
        fix, {"prediction_shape": si, "target_shape": st})


def _ce_target(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    inp, tgt = ctx.loss_tensors()
    si, st = shape(inp), shape(tgt)
    ev = {"prediction_shape": si, "target_shape": st}
    if p.kind == "target_probs" and si and len(si) == 1:
        return Explanation(
            (f"The model returns one value per sample (shape {fmt(si)}) but cross-entropy needs one score per class, "
             f"shape (batch, classes).", f"模型每个样本只返回一个值（形状 {fmt(si)}），但交叉熵需要每个类别一个分数，形状为 (batch, 类别数)。"),
            ("give the last layer num_classes outputs: nn.Linear(..., num_classes); for a yes/no target keep one "
             "output and use nn.BCEWithLogitsLoss() with y.float()",
             "让最后一层输出 num_classes 个值：nn.Linear(..., num_classes)；二分类可保留一个输出，改用 "
             "nn.BCEWithLogitsLoss() 并配 y.float()"), ev)
    if st and len(st) == 2 and st[1] == 1:
        return Explanation(
            (f"The targets have shape {fmt(st)} but cross-entropy / NLL wants class indices of shape (batch,).",
             f"目标的形状是 {fmt(st)}，但交叉熵 / NLL 需要形状为 (batch,) 的类别索引。"),
            ("drop the extra dimension: y = y.squeeze(1)", "去掉多余的维度：y = y.squeeze(1)"), ev)
    if st and si and st == si:
        return Explanation(
            (f"The targets are one-hot rows of shape {fmt(st)} stored as integers; cross-entropy wants class indices "
             f"of shape (batch,).", f"目标是形状为 {fmt(st)} 的整数 one-hot 行；交叉熵需要形状为 (batch,) 的类别索引。"),
            ("turn one-hot rows into class indices: y = y.argmax(dim=1)", "把 one-hot 转成类别索引：y = y.argmax(dim=1)"), ev)
    if p.kind == "target_seq" and si and len(si) == 3:
        return Explanation(
            (f"For a prediction of shape {fmt(si)} cross-entropy reads dimension 1 ({si[1]}) as the classes and "
             f"expects a target of shape {fmt(ints(p.groups[0]))}, but the target is {fmt(st)}.",
             f"对形状为 {fmt(si)} 的预测，交叉熵把第 1 维（{si[1]}）当作类别，期望目标形状为 {fmt(ints(p.groups[0]))}，"
             f"但目标是 {fmt(st)}。"),
            ("put the classes in dimension 1: loss_fn(out.permute(0, 2, 1), y)  # (batch, seq, classes) -> "
             "(batch, classes, seq); or flatten both: loss_fn(out.reshape(-1, out.size(-1)), y.reshape(-1))",
             "把类别放到第 1 维：loss_fn(out.permute(0, 2, 1), y)  # (batch, seq, 类别) -> (batch, 类别, seq)；"
             "或都展平：loss_fn(out.reshape(-1, out.size(-1)), y.reshape(-1))"), ev)
    return Explanation(
        (f"Cross-entropy / NLL wants predictions (batch, classes) and class indices (batch,), got {fmt(si)} and "
         f"{fmt(st)}.", f"交叉熵 / NLL 需要 (batch, 类别数) 的预测和 (batch,) 的类别索引，得到的是 {fmt(si)} 和 {fmt(st)}。"),
        ("pass one class index per sample: y has shape (batch,) and dtype torch.long",
         "每个样本给一个类别索引：y 的形状为 (batch,)，类型为 torch.long"), ev)


def _target_range(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation | None:
    bad = int(p.groups[0])
    if bad >= 0:
        return None  # labels beyond the last output: labels-off-by-one explains those
    return Explanation(
        (f"A target label is {bad}; cross-entropy / NLL accept class indices 0..C-1 only.",
         f"有一个目标标签是 {bad}；交叉熵 / NLL 只接受 0..C-1 的类别索引。"),
        (f"if {bad} marks 'no label', tell the loss to skip it: nn.CrossEntropyLoss(ignore_index={bad})",
         f"如果 {bad} 表示“没有标签”，让损失跳过它：nn.CrossEntropyLoss(ignore_index={bad})"), {"label": bad})


def _index_range(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation | None:
    emb = ctx.innermost((nn.Embedding, nn.EmbeddingBag))
    if not isinstance(emb, (nn.Embedding, nn.EmbeddingBag)):
        return None  # an index error elsewhere: not a layer-size problem we can name
    x = ctx.module_input(emb)
    hi = int(x.max()) if x is not None and x.numel() and not x.is_floating_point() else None
    n, dim = emb.num_embeddings, emb.embedding_dim
    got = (f"index {hi}", f"索引 {hi}") if hi is not None and hi >= n else ("an index outside that range", "超出范围的索引")
    size = hi + 1 if hi is not None and hi >= n else "vocab_size"
    return Explanation(
        (f"This Embedding has {n} rows (indices 0..{n - 1}) but got {got[0]}: the vocabulary / number of ids is larger "
         f"than num_embeddings.", f"这个 Embedding 有 {n} 行（索引 0..{n - 1}），却收到了{got[1]}：词表 / id 的数量大于 num_embeddings。"),
        (f"size it to the vocabulary: nn.Embedding({size}, {dim})  # num_embeddings = largest index + 1, counting "
         f"padding / unknown tokens", f"按词表大小建：nn.Embedding({size}, {dim})  # num_embeddings = 最大索引 + 1（含填充 / 未知词）"),
        {"num_embeddings": n, "max_index": hi})


def _view(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    target, n = ints(p.groups[0]), int(p.groups[1])
    tm = time_major_input(ctx, getattr(chk, "time_major", None))
    if tm is not None and tm.batch in target and n % tm.seq == 0 and n % tm.batch:
        note = tm.note()
        return Explanation(
            (f"view / reshape to {list(target)} is impossible for a tensor of {n} values. {note[0]}",
             f"无法把 {n} 个值的张量 view / reshape 成 {list(target)}。{note[1]}"),
            tm.fix(), {"view": target, "numel": n, "batch_first": False})
    if target and target[0] > 0 and -1 in target[1:]:
        cause = (f" The first size ({target[0]}) is a hard-coded batch size; a smaller last batch (or another batch "
                 f"size) breaks it.", f"第一个大小（{target[0]}）是写死的 batch 大小；最后一个较小的 batch（或换了 batch 大小）就会出错。")
    else:
        cause = (" Usually the number of features after the conv / pooling layers differs from the number written in "
                 "the code.", "通常是卷积 / 池化层之后的特征数与代码里写的数不一致。")
    return Explanation(
        (f"view / reshape to {list(target)} is impossible for a tensor of {n} values: a size written in the code does "
         f"not match the data.{cause[0]}",
         f"无法把 {n} 个值的张量 view / reshape 成 {list(target)}：代码里写的大小与数据不一致。{cause[1]}"),
        ("let PyTorch compute the size and keep the batch dimension: x = torch.flatten(x, 1)  "
         "# or x.view(x.size(0), -1)",
         "让 PyTorch 自己算大小并保留 batch 维：x = torch.flatten(x, 1)  # 或 x.view(x.size(0), -1)"),
        {"view": target, "numel": n})


def _stack(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    s0, s1 = fmt(ints(p.groups[0])), fmt(ints(p.groups[1]))
    if ctx.through("utils" + "/data") or "collate" in p.text:
        return Explanation(
            (f"The DataLoader could not stack the samples into one batch: one is {s0}, another {s1}. Every sample in "
             f"a batch must have the same shape.",
             f"DataLoader 无法把样本堆叠成一个 batch：一个是 {s0}，另一个是 {s1}。同一个 batch 里的样本形状必须相同。"),
            ("make every sample the same size in the Dataset (e.g. transforms.Resize((224, 224)), crop or pad), or "
             "pass a collate_fn that pads: DataLoader(ds, batch_size=32, collate_fn=pad_batch)  # pad_batch uses "
             "nn.utils.rnn.pad_sequence",
             "在 Dataset 里让每个样本大小相同（例如 transforms.Resize((224, 224))、裁剪或填充），或传入会填充的 collate_fn："
             "DataLoader(ds, batch_size=32, collate_fn=pad_batch)  # pad_batch 里用 nn.utils.rnn.pad_sequence"),
            {"shapes": [s0, s1]})
    return Explanation(
        (f"torch.stack needs tensors of one shape, got {s0} and {s1}.", f"torch.stack 需要形状相同的张量，得到的是 {s0} 和 {s1}。"),
        ("resize, crop or pad them to one shape before stacking, or join along an existing dimension with torch.cat",
         "堆叠前先把它们缩放、裁剪或填充成同一形状，或用 torch.cat 沿已有维度拼接"), {"shapes": [s0, s1]})


def _cat(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    dim, want, got = (int(v) for v in p.groups)
    return Explanation(
        (f"torch.cat joins tensors along dimension {dim}; every other dimension must match, but one has size {want} "
         f"and another {got} (e.g. a skip connection whose feature maps differ after pooling an odd size).",
         f"torch.cat 沿第 {dim} 维拼接张量；其他维度必须一致，但一个是 {want}，另一个是 {got}"
         f"（例如跳跃连接两边的特征图在池化奇数大小后尺寸不同）。"),
        ("print the shapes before the cat and bring them to one size, e.g. "
         "skip = F.interpolate(skip, size=x.shape[2:])",
         "在 cat 之前打印形状并统一大小，例如 skip = F.interpolate(skip, size=x.shape[2:])"),
        {"dim": dim, "sizes": [want, got]})


def _too_small(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    s = shape(ctx.module_input(ctx.failing))
    return Explanation(
        (f"The input here is {fmt(s)}: its height / width is already smaller than the kernel or pooling window, "
         f"because the conv / pooling layers before it shrank it.",
         f"这里的输入是 {fmt(s)}：它的高 / 宽已经小于卷积核或池化窗口，因为前面的卷积 / 池化层把它缩小了。"),
        ("use larger inputs, fewer pooling / strided layers, or padding: nn.Conv2d(c_in, c_out, 3, padding=1) keeps "
         "the size", "使用更大的输入、更少的池化 / 步长层，或加 padding：nn.Conv2d(c_in, c_out, 3, padding=1) 保持大小不变"),
        {"input_shape": s})


def _attention_dim(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    want, got = int(p.groups[0]), int(p.groups[1])
    return Explanation(
        (f"MultiheadAttention was built with embed_dim={want} but the query has {got} features in its last dimension. "
         f"It reads (seq, batch, features) unless batch_first=True.",
         f"MultiheadAttention 是按 embed_dim={want} 建的，但 query 最后一维有 {got} 个特征。"
         f"除非 batch_first=True，它把输入当作 (seq, batch, 特征)。"),
        (f"build it with embed_dim={got} (or project the input to {want} features first); for (batch, seq, features) "
         f"data pass batch_first=True",
         f"用 embed_dim={got} 建（或先把输入投影到 {want} 个特征）；(batch, seq, 特征) 的数据要传 batch_first=True"),
        {"embed_dim": want, "got": got})


def _bmm(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    want, got = ints(p.groups[0]), ints(p.groups[1])
    return Explanation(
        (f"A batched matrix product (torch.bmm / @) needed the second tensor to start with {list(want)} but it starts "
         f"with {list(got)}: the inner sizes do not agree.",
         f"批量矩阵乘法（torch.bmm / @）要求第二个张量的前两维是 {list(want)}，实际是 {list(got)}：中间的大小对不上。"),
        ("check which dimension should be contracted and transpose: scores = q @ k.transpose(-2, -1)",
         "确认要相乘消去的是哪一维，并转置：scores = q @ k.transpose(-2, -1)"), {"expected": want, "got": got})
