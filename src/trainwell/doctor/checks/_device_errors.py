"""Explainers for device and dtype mismatches."""

from __future__ import annotations


import torch
from torch import nn

from trainwell.doctor.checks._error_parsing import (Context, Parsed)
from trainwell.doctor.checks._error_base import Explanation, ErrorCheck, Words


_DTYPES = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16", "long": "int64",
           "long int": "int64", "int": "int32", "byte": "uint8", "unsigned char": "uint8", "char": "int8",
           "short": "int16", "bool": "bool", "float64": "float64", "float32": "float32", "float16": "float16",
           "int64": "int64", "int32": "int32", "uint8": "uint8"}


def _dtype_name(text: str) -> str:
    t = text.lower().removeprefix("torch.").removeprefix("cuda.").removesuffix("tensor").strip()
    return _DTYPES.get(t, t)


def _weights(ctx: Context) -> tuple[nn.Module | None, torch.Tensor | None]:
    """The innermost running module that owns parameters, and its first one."""
    for m in reversed(ctx.modules):
        p = next(m.parameters(recurse=False), None)
        p = p if p is not None else next(m.parameters(), None)
        if p is not None:
            return m, p
    return None, None


def _move_fix(meta: bool) -> Words:
    if meta:
        return ("the meta device holds shapes only, no values: build the model on a real device, or materialise "
                "it and then load or initialise its weights: model = model.to_empty(device=device); "
                "model.load_state_dict(state)  # device = 'cuda' if torch.cuda.is_available() else 'cpu'",
                "meta 设备只有形状、没有数值：在真实设备上建模型，或先实体化再加载 / 初始化权重："
                "model = model.to_empty(device=device); model.load_state_dict(state)  "
                "# device = 'cuda' if torch.cuda.is_available() else 'cpu'")
    return ("move the model once and every batch to the same device: model.to(device); x, y = x.to(device), "
            "y.to(device)  # device = 'cuda' if torch.cuda.is_available() else 'cpu'",
            "把模型和每个 batch 都放到同一个设备上：model.to(device); x, y = x.to(device), y.to(device)  "
            "# device = 'cuda' if torch.cuda.is_available() else 'cpu'")


def _devices(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    named = [g for g in p.groups if g and (g.split(":")[0].lower() in ("cpu", "cuda", "mps", "xpu", "meta", "hip"))]
    mod, w = _weights(ctx)
    x = ctx.module_input(mod) if mod is not None else None
    inp, tgt = ctx.loss_tensors()
    meta = "meta" in " ".join(named).lower()
    who = ("The layer", "这一层") if mod is ctx.failing else (f"`{ctx.name_of(mod) or type(mod).__name__}`",) * 2
    if mod is not None and w is not None and isinstance(x, torch.Tensor) and x.device != w.device:
        if meta or "meta" in (w.device.type, x.device.type):
            fix = _move_fix(True)
        elif w.device.type == "cpu":
            fix = (f"the model was never moved: model.to({str(x.device)!r}) once, before creating the optimizer",
                   f"模型没有被移动过：在创建优化器之前执行一次 model.to({str(x.device)!r})")
        else:
            fix = (f"move every batch (and its labels) where the model is: x, y = x.to({str(w.device)!r}), "
                   f"y.to({str(w.device)!r})", f"把每个 batch（及其标签）放到模型所在的设备：x, y = "
                   f"x.to({str(w.device)!r}), y.to({str(w.device)!r})")
        return Explanation(
            (f"{who[0]} has its weights on {w.device} but its input is on {x.device}. Every tensor in one operation "
             f"must be on the same device.",
             f"{who[1]}的权重在 {w.device} 上，但它的输入在 {x.device} 上。同一个运算里的所有张量必须在同一设备上。"),
            fix, {"weights_device": str(w.device), "input_device": str(x.device)})
    if inp is not None and tgt is not None and inp.device != tgt.device:
        return Explanation(
            (f"The loss got the prediction on {inp.device} and the target on {tgt.device}.",
             f"损失函数收到的预测在 {inp.device} 上，目标在 {tgt.device} 上。"),
            (f"move the labels too, like the inputs: y = y.to({str(inp.device)!r})",
             f"标签也要和输入一样移过去：y = y.to({str(inp.device)!r})"),
            {"prediction_device": str(inp.device), "target_device": str(tgt.device)})
    if ctx.through("optim"):
        return Explanation(
            ("In optimizer.step() the parameters, their gradients or the optimizer's state are on different devices.",
             "在 optimizer.step() 中，参数、梯度或优化器状态位于不同设备上。"),
            ("move the model first, then create the optimizer (and load its saved state after that): "
             "model.to(device); opt = torch.optim.Adam(model.parameters()); opt.load_state_dict(state)",
             "先移动模型，再创建优化器（之后再加载它保存的状态）：model.to(device); "
             "opt = torch.optim.Adam(model.parameters()); opt.load_state_dict(state)"), {"devices": named})
    if mod is not None and w is not None and isinstance(x, torch.Tensor) and not meta:
        return Explanation(
            (f"{who[0]} has its weights and its input on {w.device}, but another tensor it uses is on a different "
             f"device: e.g. a tensor created inside forward (torch.zeros(...) without device=) or an initial hidden "
             f"state.", f"{who[1]}的权重和输入都在 {w.device} 上，但它用到的另一个张量在别的设备上：例如在 forward 里"
             f"创建的张量（torch.zeros(...) 没有指定 device=）或初始隐藏状态。"),
            ("create such tensors on the input's device: h0 = torch.zeros(..., device=x.device)",
             "在输入所在的设备上创建这些张量：h0 = torch.zeros(..., device=x.device)"),
            {"weights_device": str(w.device), "devices": named})
    pair = " and ".join(dict.fromkeys(named)) or "two devices"
    return Explanation(
        (f"One operation received tensors on different devices ({pair}); all of them must be on one device.",
         f"一个运算收到了位于不同设备（{pair.replace(' and ', ' 和 ')}）上的张量；它们必须在同一设备上。"),
        _move_fix(meta), {"devices": named})


def _dtype_words(xd: str, wd: str) -> Explanation:
    if xd == "float64":
        cause = (" NumPy arrays are float64 by default, so torch.from_numpy / torch.tensor(array) gives double "
                 "tensors.",
                 "NumPy 数组默认是 float64，所以 torch.from_numpy / torch.tensor(array) 得到的是 double 张量。")
    elif xd.startswith(("int", "uint", "bool")):
        cause = (" The input holds integers (e.g. raw pixel values or ids).", "输入是整数（例如原始像素值或 id）。")
    elif xd in ("float16", "bfloat16") or wd in ("float16", "bfloat16"):
        cause = (" Half precision is mixed with full precision: run mixed precision under torch.autocast.",
                 "半精度和全精度混在了一起：混合精度应在 torch.autocast 下运行。")
    else:
        cause = ("", "")
    if wd == "float32" and xd.startswith(("int", "uint")):
        fix = ("convert the input to float: x = x.float()  # pixel values: x.float() / 255",
               "把输入转成浮点数：x = x.float()  # 像素值：x.float() / 255")
    elif wd == "float32":
        fix = ("convert the input to the model's dtype: x = x.float()  # or torch.tensor(array, dtype=torch.float32)",
               "把输入转成模型的类型：x = x.float()  # 或 torch.tensor(array, dtype=torch.float32)")
    else:
        fix = (f"convert one side: x = x.to(torch.{wd})  # or model.float() and x.float()",
               f"转换其中一方：x = x.to(torch.{wd})  # 或 model.float() 和 x.float()")
    return Explanation(
        (f"The layer's weights are {wd} but its input is {xd}; the input must have the weights' dtype.{cause[0]}",
         f"这一层的权重是 {wd}，但输入是 {xd}；输入必须与权重的数据类型相同。{cause[1]}"), fix,
        {"input_dtype": xd, "weight_dtype": wd})


def _type_pair(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    a, b = p.groups[0], p.groups[1]
    if ("cuda" in a) != ("cuda" in b):
        xd, wd = ("cuda" if "cuda" in a else "cpu"), ("cuda" if "cuda" in b else "cpu")
        return Explanation(
            (f"The layer's weights are on {wd} but its input is on {xd}.", f"这一层的权重在 {wd} 上，但输入在 {xd} 上。"),
            (f"x = x.to({wd!r})  # the input goes where the model is; or model.to(device) once for the whole model",
             f"x = x.to({wd!r})  # 把输入放到模型所在的设备；或对整个模型 model.to(device)"),
            {"input": a, "weights": b})
    return _dtype_words(_dtype_name(a), _dtype_name(b))


def _dtype_mm(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    return _dtype_words(_dtype_name(p.groups[0]), _dtype_name(p.groups[1]))


def _dtype_loss(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    """Targets or values with the wrong dtype: integer targets for BCE, float targets for cross-entropy, ..."""
    inp, tgt = ctx.loss_tensors()
    a, b = _dtype_name(p.groups[0]), _dtype_name(p.groups[1])
    if p.kind == "dtype_index":
        return Explanation(
            (f"An Embedding got its indices as {a}; indices must be integers.", f"Embedding 收到的索引是 {a}；索引必须是整数。"),
            ("convert the ids: x = x.long()", "把 id 转成整数：x = x.long()"), {"indices": a})
    if inp is not None and tgt is not None:
        ev = {"prediction_dtype": str(inp.dtype), "target_dtype": str(tgt.dtype)}
        if not tgt.is_floating_point() and inp.is_floating_point() and p.kind in ("dtype_cast", "dtype_scalar",
                                                                                  "dtype_found"):
            return Explanation(
                (f"The loss got an integer target ({tgt.dtype}); this loss compares with float targets "
                 f"(e.g. 0.0 / 1.0).",
                 f"损失函数收到的目标是整数（{tgt.dtype}）；这个损失需要浮点数目标（例如 0.0 / 1.0）。"),
                ("convert the target: loss = loss_fn(out, y.float())", "把目标转成浮点数：loss = loss_fn(out, y.float())"), ev)
        if tgt.is_floating_point() and p.kind in ("dtype_target", "dtype_scalar") and tgt.ndim == inp.ndim - 1:
            return Explanation(
                (f"Cross-entropy / NLL want class indices as integers (int64), but the target is {tgt.dtype}.",
                 f"交叉熵 / NLL 需要整数（int64）的类别索引，但目标是 {tgt.dtype}。"),
                ("y = y.long()  # class indices; soft labels (probabilities) must have the prediction's shape",
                 "y = y.long()  # 类别索引；软标签（概率）必须与预测形状相同"), ev)
        if inp.dtype != tgt.dtype:
            return Explanation(
                (f"The loss mixes dtypes: the prediction is {inp.dtype} and the target {tgt.dtype}.",
                 f"损失函数混用了数据类型：预测是 {inp.dtype}，目标是 {tgt.dtype}。"),
                (f"give the target the prediction's dtype: y = y.to({inp.dtype})  # data from NumPy is float64",
                 f"让目标与预测类型一致：y = y.to({inp.dtype})  # 来自 NumPy 的数据是 float64"), ev)
    if p.kind == "dtype_cast":
        return Explanation(
            (f"An operation produced {a} values but had to store them in a {b} tensor (an in-place op such as "
             f"x += 0.5, or an integer target / buffer).",
             f"一个运算产生了 {a} 值，却要写进 {b} 张量（例如 x += 0.5 这样的原地运算，或整数目标 / 缓冲区）。"),
            ("convert first: x = x.float()  # or write it out of place: x = x + 0.5",
             "先转换类型：x = x.float()  # 或改成非原地运算：x = x + 0.5"), {"result": a, "output": b})
    if p.kind == "dtype_target":
        return Explanation(
            (f"Cross-entropy / NLL want class indices as integers (int64), but the target is {a}.",
             f"交叉熵 / NLL 需要整数（int64）的类别索引，但目标是 {a}。"),
            ("y = y.long()", "y = y.long()"), {"target": a})
    want, found = (a, b) if p.kind == "dtype_scalar" else (b, a)
    return Explanation(
        (f"A tensor is {found} where {want} was expected: two tensors that meet in one operation (often the "
         f"prediction and a target from NumPy, float64) have different dtypes.",
         f"一个张量是 {found}，而这里需要 {want}：在同一运算里相遇的两个张量（常见的是预测和来自 NumPy 的 float64 目标）数据类型不同。"),
        ("convert the data once, where it is made: x, y = x.float(), y.float()  # (class indices: y.long())",
         "在数据生成处统一转换：x, y = x.float(), y.float()  # （类别索引用 y.long()）"), {"expected": want, "found": found})


def _device_misc(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    if p.kind == "mps_input":
        return Explanation(("The model is on the MPS (Apple GPU) device but its input is on the CPU.",
                            "模型在 MPS（Apple GPU）设备上，但输入在 CPU 上。"),
                           ("x = x.to('mps')  # move every batch where the model is",
                            "x = x.to('mps')  # 每个 batch 都放到模型所在设备"))
    return Explanation(("A tensor was indexed with indices that live on another device.",
                        "用位于另一个设备上的索引去索引张量。"),
                       ("idx = idx.to(t.device)  # indices on the indexed tensor's device",
                        "idx = idx.to(t.device)  # 索引放到被索引张量的设备上"))


_NO_CUDA: dict[str, Words] = {
    "no_driver": ("PyTorch was built with CUDA, but it found no NVIDIA driver: this machine has no NVIDIA GPU, or its "
                  "driver is not installed (or not visible, e.g. inside a container started without GPU access). "
                  "To use a GPU, install the driver until nvidia-smi lists it and torch.cuda.is_available() "
                  "prints True.",
                  "PyTorch 带有 CUDA 支持，但没有找到 NVIDIA 驱动：这台机器没有 NVIDIA GPU，或者没有安装驱动"
                  "（或驱动不可见，例如容器启动时没有开放 GPU）。要用 GPU，先装好驱动，直到 nvidia-smi 能列出 GPU、"
                  "torch.cuda.is_available() 返回 True。"),
    "cpu_build": ("The installed PyTorch is a CPU-only build: it cannot use a GPU even if the machine has one. To use "
                  "one, install the CUDA build for your system with the command from pytorch.org.",
                  "安装的 PyTorch 是只支持 CPU 的版本：即使机器有 GPU 也用不了。要用 GPU，请按 pytorch.org 上的命令"
                  "安装适合你系统的 CUDA 版 PyTorch。"),
    "no_gpu": ("The driver is there, but PyTorch sees no GPU: none is free or visible to this process "
               "(CUDA_VISIBLE_DEVICES may be empty or wrong; nvidia-smi shows the GPUs and what uses them).",
               "驱动存在，但 PyTorch 看不到任何 GPU：没有可用的 GPU，或者它对这个进程不可见（CUDA_VISIBLE_DEVICES 可能为空或写错；"
               "nvidia-smi 可以查看 GPU 及其占用情况）。"),
    "no_mps": ("The script asks for Apple's MPS device, which this machine or this PyTorch does not have.",
               "脚本要求使用 Apple 的 MPS 设备，但这台机器或这个 PyTorch 版本不支持。"),
    "map_location": ("The checkpoint holds GPU tensors, and torch.load puts them back on the GPU, which this "
                     "machine does not have.",
                     "检查点里保存的是 GPU 张量，torch.load 会把它们放回 GPU 上，而这台机器没有可用的 GPU。"),
}


def _cuda_unavailable(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    """The script asks for a GPU that is not there: say which of the usual reasons, and how to run anyway."""
    cause = _NO_CUDA[p.kind]
    if p.kind == "map_location":
        fix = ("load onto the device you have: torch.load(path, map_location=device)  "
               "# device = 'cuda' if torch.cuda.is_available() else 'cpu'",
               "加载到你现有的设备上：torch.load(path, map_location=device)  "
               "# device = 'cuda' if torch.cuda.is_available() else 'cpu'")
    else:
        fix = ("pick the device once, from what exists, and use it everywhere instead of .cuda(): "
               "device = 'cuda' if torch.cuda.is_available() else 'cpu'; model.to(device); x = x.to(device)  "
               "# `trainwell env` shows what PyTorch can see",
               "根据实际情况选一次设备，处处用它代替 .cuda()：device = 'cuda' if torch.cuda.is_available() else 'cpu'; "
               "model.to(device); x = x.to(device)  # `trainwell env` 可以查看 PyTorch 能看到哪些设备")
    return Explanation(cause, fix,
                       {"reason": p.kind, "cuda_available": torch.cuda.is_available(),
                        "built_with_cuda": torch.version.cuda is not None})


def _dtype_rnn(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    return _dtype_words(_dtype_name(p.groups[0]), _dtype_name(p.groups[1]))
