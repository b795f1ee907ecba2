"""Crash causes read from what an operation was given besides tensors: a tuple, list or NumPy array where a
tensor belongs, an optimizer given something other than tensors, integer data asked to require gradients, a
device name PyTorch does not know, a reversed NumPy view, a layer assigned before ``super().__init__()``,
split lengths that do not add up, and ``padding='same'`` with a stride.

Each rule takes a ``Failure`` and returns (cause, fix) in English and Chinese, or ``None``.
"""

from __future__ import annotations

import types

import torch
from torch import nn

from trainwell.doctor.checks._failure import Failure, fmt_shape, short_name

Words = tuple[str, str]
Found = tuple[Words, Words] | None
_NUMBER = (int, float, bool)


def _kind(v: object) -> str:
    return "generator" if isinstance(v, types.GeneratorType) else type(v).__name__


def not_a_tensor(f: Failure) -> Found:
    """A tuple of tensors, a list of numbers or a list holding a non-tensor, passed where a tensor belongs."""
    if f.error_type != "TypeError":
        return None
    for v in f.values:
        items = v.items()
        if not items or isinstance(v.value, str):
            continue
        tensors = [i for i in items if isinstance(i, torch.Tensor)]
        if isinstance(v.value, tuple) and len(tensors) == len(items):
            shapes = ", ".join(fmt_shape(tuple(t.shape)) for t in tensors[:4])
            return ((f"`{v.name}` is a tuple of {len(items)} tensors ({shapes}), not a tensor: the call that made it "
                     f"returns several values.", f"`{v.name}` 是由 {len(items)} 个张量组成的 tuple（{shapes}），不是张量："
                     f"产生它的调用返回了多个值。"),
                    ("unpack the result and pass the tensor you mean: out, extra = model(x) (or out = result[0])",
                     "拆开返回值，只传需要的那个张量：out, extra = model(x)（或 out = result[0]）"))
        if tensors and len(tensors) < len(items):
            i, bad = next((i, b) for i, b in enumerate(items) if not isinstance(b, torch.Tensor))
            return ((f"`{v.name}` holds tensors and, at position {i}, a {_kind(bad)} ({bad!r:.40}) that is not a "
                     f"tensor; every element must be a tensor.",
                     f"`{v.name}` 里有张量，但第 {i} 个元素是 {_kind(bad)}（{bad!r:.40}），不是张量；每个元素都必须是张量。"),
                    ("make that element a tensor of the right shape, e.g. torch.zeros_like(x) instead of 0, or leave "
                     "it out of the list", "把该元素换成形状合适的张量，例如用 torch.zeros_like(x) 代替 0，或者不放进列表"))
        if all(isinstance(i, _NUMBER) for i in items):
            ints = all(isinstance(i, int) for i in items)
            return ((f"`{v.name}` is a Python {_kind(v.value)} of {len(items)} numbers, not a tensor.",
                     f"`{v.name}` 是包含 {len(items)} 个数的 Python {_kind(v.value)}，不是张量。"),
                    (f"make it a tensor first: torch.tensor({v.name}{', dtype=torch.long' if ints else ''})"
                     f"{' (a batch of one: wrap it as [' + v.name + '])' if ints else ''}",
                     f"先转成张量：torch.tensor({v.name}{', dtype=torch.long' if ints else ''})"))
    arrays = [o for o in f.operands if o.device == "numpy"]
    if arrays and short_name(f.op) not in ("from_numpy", "tensor", "as_tensor"):
        a = arrays[0]
        return ((f"`{a.name}` is a NumPy array {fmt_shape(a.shape)} {a.dtype}, not a tensor.",
                 f"`{a.name}` 是 NumPy 数组 {fmt_shape(a.shape)} {a.dtype}，不是张量。"),
                (f"convert it: torch.from_numpy({a.name}).float() (layers use float32)",
                 f"先转换：torch.from_numpy({a.name}).float()（层使用 float32）"))
    return None


def optimizer_params(f: Failure) -> Found:
    """An optimizer given something other than an iterable of tensors (or of parameter-group dicts)."""
    if not isinstance(f.owner, torch.optim.Optimizer) and "Optimizer" not in (f.op or "") \
            and not any(isinstance(v.value, torch.optim.Optimizer) for v in f.values):
        return None
    group = f.value("param_group")
    params = group.get("params") if isinstance(group, dict) else f.value("params")
    one = f.operand("params")
    if one is not None and params is None:
        return ((f"The optimizer was given one tensor `{one.name}` {fmt_shape(one.shape)}; it takes an iterable "
                 f"(a list) of tensors.", f"优化器收到的是单个张量 `{one.name}` {fmt_shape(one.shape)}；它需要张量的可迭代对象（列表）。"),
                (f"pass a list: torch.optim.SGD([{one.name}], lr=...)",
                 f"传入列表：torch.optim.SGD([{one.name}], lr=...)"))
    items = list(params) if isinstance(params, (list, tuple)) else []
    bad = [i for i in items if not isinstance(i, (torch.Tensor, dict))]
    if not bad:
        return None
    kinds = sorted({_kind(b) for b in bad})
    gens = any(isinstance(b, types.GeneratorType) for b in bad)
    modules = any(isinstance(b, nn.Module) for b in bad)
    what = ("generators such as model.parameters() (each one yields tensors, but is not one)" if gens else
            "modules (a layer is not its parameters)" if modules else ", ".join(kinds))
    what_zh = ("生成器，例如 model.parameters()（它产生张量，但本身不是张量）" if gens else
               "模块（层本身不是它的参数）" if modules else "、".join(kinds))
    return ((f"The list given to the optimizer holds {what}; it must hold tensors (or dicts with 'params').",
             f"传给优化器的列表里是{what_zh}；它必须装张量（或带 'params' 的字典）。"),
            ("join the parameters into one iterable: list(a.parameters()) + list(b.parameters()), or "
             "itertools.chain(a.parameters(), b.parameters()); use [{'params': a.parameters()}, ...] for groups",
             "把参数合成一个可迭代对象：list(a.parameters()) + list(b.parameters())，或 "
             "itertools.chain(a.parameters(), b.parameters())；分组则用 [{'params': a.parameters()}, ...]"))


def int_requires_grad(f: Failure) -> Found:
    """requires_grad=True asked of integer data."""
    if f.value("requires_grad") is not True:
        return None
    dtype = f.value("dtype")
    data = f.value("data") if f.value("data") is not None else next((v.value for v in f.values if v.items()), None)
    flat = list(data) if isinstance(data, (list, tuple)) else [data] if isinstance(data, int) else []
    ints = (isinstance(dtype, torch.dtype) and not dtype.is_floating_point and not dtype.is_complex) or \
        (dtype is None and flat and all(isinstance(i, int) and not isinstance(i, bool) for i in flat))
    if not ints:
        return None
    return (("Only floating-point tensors can require gradients, and this one holds integers (Python ints such as "
             "1 make an int64 tensor).", "只有浮点张量才能要求梯度，而这个张量存的是整数（像 1 这样的 Python 整数会得到 int64 张量）。"),
            ("write the numbers as floats (1.0) or pass dtype=torch.float32",
             "把数写成浮点数（1.0），或传 dtype=torch.float32"))


def device_string(f: Failure) -> Found:
    """A device name PyTorch does not know ('gpu', 'cuda0', a typo)."""
    names = [v.value for v in f.values if isinstance(v.value, str)]
    names += [i for v in f.values for i in v.items() if isinstance(i, str)]
    for name in names:
        if not name or len(name) > 20:
            continue
        try:
            torch.device(name)
        except (RuntimeError, ValueError, TypeError):
            if "device" not in f.message:
                continue
            return ((f"'{name}' is not a device name PyTorch knows: a GPU is 'cuda' (or 'cuda:0'), the processor "
                     f"'cpu', Apple's GPU 'mps'.", f"'{name}' 不是 PyTorch 认识的设备名：GPU 是 'cuda'（或 'cuda:0'），"
                     f"处理器是 'cpu'，苹果 GPU 是 'mps'。"),
                    ("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu'); model.to(device)",
                     "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')；model.to(device)"))
    return None


def numpy_strides(f: Failure) -> Found:
    """A NumPy view with negative strides (a reversed slice such as [..., ::-1]) given to torch."""
    a = next((o for o in f.operands if o.device == "numpy" and any(s < 0 for s in o.strides)), None)
    if a is None:
        return None
    return ((f"`{a.name}` {fmt_shape(a.shape)} is a reversed view of another array (a slice like [::-1], or a "
             f"BGR->RGB flip), which has negative strides; tensors cannot share such memory.",
             f"`{a.name}` {fmt_shape(a.shape)} 是另一个数组的反向视图（例如 [::-1] 切片或 BGR->RGB 翻转），步长为负；"
             f"张量无法共享这种内存。"),
            (f"copy it into ordinary memory first: torch.from_numpy({a.name}.copy()) (or "
             f"np.ascontiguousarray({a.name}))", f"先复制成普通内存：torch.from_numpy({a.name}.copy())（或 "
             f"np.ascontiguousarray({a.name})）"))


def init_order(f: Failure) -> Found:
    """A layer, parameter or buffer assigned in ``__init__`` before ``super().__init__()`` ran."""
    me = f.owner
    if not isinstance(me, nn.Module) or "_modules" in vars(me):
        return None
    return ((f"`{type(me).__name__}.__init__` assigns a layer (or parameter) before calling super().__init__(), "
             f"which sets up the place nn.Module keeps them.",
             f"`{type(me).__name__}.__init__` 在调用 super().__init__() 之前就给层（或参数）赋值了，而正是 super().__init__() "
             f"建立了 nn.Module 存放它们的地方。"),
            ("call super().__init__() first in __init__, then create the layers",
             "在 __init__ 里先调用 super().__init__()，再创建各层"))


def split_lengths(f: Failure) -> Found:
    """random_split lengths that do not add up to the dataset's size."""
    if short_name(f.op) != "random_split":
        return None
    lengths, dataset = f.value("lengths"), f.value("dataset")
    if not isinstance(lengths, (list, tuple)) or not all(isinstance(n, int) for n in lengths):
        return None
    try:
        size = len(dataset)
    except TypeError:
        return None
    total = sum(lengths)
    if total == size:
        return None
    return ((f"The split lengths {list(lengths)} add up to {total}, but the dataset has {size} items; int() of "
             f"fractions rounds down and loses the remainder.",
             f"划分长度 {list(lengths)} 之和是 {total}，但数据集有 {size} 个样本；对比例取 int() 会向下取整，丢掉余数。"),
            (f"give fractions that sum to 1, e.g. random_split(dataset, [0.9, 0.1]), or make the last length the "
             f"rest: n_val = int({size} * 0.1); [{size} - n_val, n_val]",
             f"给出和为 1 的比例，例如 random_split(dataset, [0.9, 0.1])，或让最后一个长度取余下的：n_val = int({size} * 0.1)；"
             f"[{size} - n_val, n_val]"))


def same_padding(f: Failure) -> Found:
    """padding='same' on a convolution with a stride above 1."""
    if f.value("padding") != "same":
        return None
    stride = f.value("stride")
    steps = stride if isinstance(stride, (tuple, list)) else (stride,) if isinstance(stride, int) else ()
    if not steps or all(s == 1 for s in steps):
        return None
    k = f.value("kernel_size")
    k0 = k[0] if isinstance(k, (tuple, list)) else k if isinstance(k, int) else None
    pad = f"padding={(k0 - 1) // 2}" if isinstance(k0, int) else "padding=(kernel_size - 1) // 2"
    return ((f"padding='same' keeps the output as long as the input, which a stride of {steps[0]} cannot: it "
             f"shortens the output by that factor.", f"padding='same' 要求输出与输入一样长，而步长为 {steps[0]} 会把输出缩短相应倍数，做不到。"),
            (f"give the padding as a number, e.g. {pad} (the output is then about input / {steps[0]} long), or use "
             f"stride=1", f"用数字给出填充，例如 {pad}（输出长度约为输入 / {steps[0]}），或者用 stride=1"))


RULES = [not_a_tensor, optimizer_params, int_requires_grad, device_string, numpy_strides, init_order, split_lengths,
         same_padding]
