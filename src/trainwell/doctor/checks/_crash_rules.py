"""Likely causes of a crash, judged from what failed (the operation and its operands' shapes, dtypes,
devices and gradient flags); the message text only breaks ties between causes the facts allow.

Each rule takes a ``Failure`` and returns (cause, fix) in English and Chinese, or ``None`` when the facts do
not point at its cause. ``cause_of`` returns the first that speaks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import torch

from trainwell.doctor.checks import _crash_shapes, _crash_values
from trainwell.doctor.checks._failure import Failure, Operand, fmt_shape

Words = tuple[str, str]
Rule = Callable[[Failure], "tuple[Words, Words] | None"]

_FLOAT = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "bool")
_MATMUL = {"dot", "vdot", "mm", "matmul", "bmm", "mv", "linear", "einsum"}  # by the last part of the name


def _short(op: str | None) -> str:
    """The last part of an operation's name: ``torch.dot`` -> ``dot``, ``x.view`` -> ``view``."""
    return (op or "").split("(")[0].rsplit(".", 1)[-1]


def _is_matmul(f: Failure) -> bool:
    return f.op == "@" or _short(f.op) in _MATMUL or (f.op or "").startswith("nn.Linear")


def _devices(f: Failure) -> tuple[Words, Words] | None:
    kinds = sorted({o.device for o in f.operands})
    if len(kinds) < 2:
        return None
    listed = ", ".join(f"`{o.name}` on {o.device}" for o in f.operands)
    return ((f"Its tensors are on different devices ({listed}); one operation needs them all on one device.",
             f"这些张量在不同的设备上（{listed}）；一个运算要求它们都在同一设备上。"),
            ("move the model and every tensor it meets to one device: device = 'cuda' if torch.cuda.is_available() "
             "else 'cpu'; model.to(device); x = x.to(device)",
             "把模型和它用到的每个张量放到同一设备：device = 'cuda' if torch.cuda.is_available() else 'cpu'；"
             "model.to(device)；x = x.to(device)"))


def _dtypes(f: Failure) -> tuple[Words, Words] | None:
    kinds = [o for o in f.operands if o.name not in ("target", "indices", "index")]
    floats = {o.dtype for o in kinds if o.dtype in _FLOAT}
    ints = [o for o in kinds if o.dtype in _INTS]
    half_cpu = [o for o in kinds if o.dtype in ("float16",) and o.device == "cpu"]
    if half_cpu and re.search(r"not implemented for 'Half'", f.message):
        return ((f"`{half_cpu[0].name}` is float16 on the CPU, where this operation has no float16 kernel.",
                 f"`{half_cpu[0].name}` 是 CPU 上的 float16，这个运算在 CPU 上没有 float16 实现。"),
                ("on the CPU keep float32 (model.float(), x.float()); use float16 only on a GPU",
                 "在 CPU 上用 float32（model.float()、x.float()）；float16 只在 GPU 上使用"))
    if len(floats) > 1:
        listed = ", ".join(f"`{o.name}` {o.dtype}" for o in kinds if o.dtype in _FLOAT)
        return ((f"Its tensors have different float types ({listed}); NumPy arrays become float64, layers are "
                 f"float32.", f"这些张量的浮点类型不同（{listed}）；NumPy 数组转成的是 float64，而层的参数是 float32。"),
                ("make them one type, usually float32: x = x.float() (or torch.tensor(array, dtype=torch.float32))",
                 "统一成一种类型，通常是 float32：x = x.float()（或 torch.tensor(array, dtype=torch.float32)）"))
    # Integers beside floats are often right (indices, lengths, labels): only when the message speaks of types.
    typed = re.search(r"dtype|scalar type|not implemented for|Long|Int|Float|Double|Half", f.message)
    if ints and typed and (floats or _is_matmul(f) or "not implemented for" in f.message):
        o = ints[0]
        return ((f"`{o.name}` holds integers ({o.dtype}); this operation works on floating-point tensors.",
                 f"`{o.name}` 存的是整数（{o.dtype}）；这个运算只接受浮点张量。"),
                (f"convert it: {o.name}.float() (or create it with dtype=torch.float32)",
                 f"转换类型：{o.name}.float()（或创建时指定 dtype=torch.float32）"))
    return None


def _dot(f: Failure) -> tuple[Words, Words] | None:
    if _short(f.op) not in ("dot", "vdot") or not f.operands:
        return None
    wrong = [o for o in f.operands if len(o.shape) != 1]
    if not wrong:
        return None
    return ((f"{f.op} takes two 1-D vectors, but got {_shapes(f.operands)}; unlike NumPy's dot it does not "
             f"multiply matrices.", f"{f.op} 只接受两个一维向量，却得到 {_shapes(f.operands)}；它不像 NumPy 的 dot 那样做矩阵乘法。"),
            ("for matrices use a @ b (torch.matmul); for a batch of row-wise dot products use (a * b).sum(-1)",
             "矩阵请用 a @ b（torch.matmul）；逐行点积用 (a * b).sum(-1)"))


def _matmul(f: Failure) -> tuple[Words, Words] | None:
    if not _is_matmul(f) or len(f.operands) < 2 or f.module is not None:
        return None
    a, b = f.operands[0], f.operands[1]
    if not a.shape or not b.shape:
        return None
    if _short(f.op) in ("mm", "bmm", "mv"):
        want = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1)}[_short(f.op)]
        if (len(a.shape), len(b.shape)) != want:
            return ((f"{f.op} needs {want[0]}-D and {want[1]}-D tensors, but got {_shapes([a, b])}.",
                     f"{f.op} 需要 {want[0]} 维和 {want[1]} 维张量，却得到 {_shapes([a, b])}。"),
                    ("use a @ b (torch.matmul), which accepts 1-D and batched tensors, or add the missing dimension "
                     "with unsqueeze(0)", "改用 a @ b（torch.matmul），它接受一维和带 batch 的张量；或用 unsqueeze(0) 补上缺的维度"))
    k_a, k_b = a.shape[-1], (b.shape[-2] if len(b.shape) >= 2 else b.shape[0])
    if k_a == k_b:
        return None
    hint = (" Transposing the second one would fit." if len(b.shape) >= 2 and b.shape[-1] == k_a else "")
    hint_zh = "把第二个转置就能对上。" if hint else ""
    return ((f"A matrix product needs the last size of `{a.name}` ({k_a}) to equal the "
             f"{'second-to-last' if len(b.shape) >= 2 else 'only'} size of `{b.name}` ({k_b}).{hint}",
             f"矩阵乘法要求 `{a.name}` 的最后一维（{k_a}）等于 `{b.name}` 的"
             f"{'倒数第二维' if len(b.shape) >= 2 else '长度'}（{k_b}）。{hint_zh}"),
            ((f"transpose: {a.name} @ {b.name}.T" if hint else
              "make the inner sizes agree: check which tensor is (rows, features) and which (features, outputs)"),
             (f"转置：{a.name} @ {b.name}.T" if hint else "让内侧维度一致：弄清哪个是 (行, 特征)，哪个是 (特征, 输出)")))


def _linear_features(f: Failure) -> tuple[Words, Words] | None:
    m = f.module
    if m is None or not hasattr(m, "in_features") or not f.operands or not f.operands[0].shape:
        return None
    x = f.operands[0]
    if x.shape[-1] == m.in_features:
        return None
    side = math.isqrt(x.shape[-1]) if x.shape[-1] > 0 else 0
    extra = (f" Its last size {x.shape[-1]} is the input's flattened size only if it was flattened: "
             f"print the shape just before this layer." if side * side != x.shape[-1] else "")
    return ((f"The layer expects {m.in_features} features in the last dimension, but its input `{x.name}` has "
             f"shape {fmt_shape(x.shape)}.{extra}",
             f"该层要求最后一维有 {m.in_features} 个特征，但输入 `{x.name}` 的形状是 {fmt_shape(x.shape)}。"),
            (f"make the layer fit the data: nn.Linear({x.shape[-1]}, {m.out_features}), or flatten/reshape the input "
             f"so its last size is {m.in_features}",
             f"让层匹配数据：nn.Linear({x.shape[-1]}, {m.out_features})，或把输入展平/变形，使最后一维为 {m.in_features}"))


def _backward(f: Failure) -> tuple[Words, Words] | None:
    if _short(f.op) not in ("backward", "grad") and "backward" not in f.line:
        return None
    loss = f.operands[0] if f.operands else None
    text = f.message
    if loss is not None and math.prod(loss.shape) > 1 and "scalar" in text:
        return ((f"backward() was called on a tensor of shape {fmt_shape(loss.shape)}; without an argument it "
                 f"needs a single number.", f"对形状为 {fmt_shape(loss.shape)} 的张量调用了 backward()；不带参数时它必须是一个数。"),
                ("reduce the loss to one number first: loss.mean().backward() (or give the loss function its "
                 "default reduction='mean')", "先把损失化成一个数：loss.mean().backward()（或让损失函数用默认的 reduction='mean'）"))
    if (loss is not None and not loss.requires_grad) or "does not require grad" in text:
        return (("The tensor given to backward() is not connected to any parameter: it was computed under "
                 "torch.no_grad(), detached (.detach(), .item(), .numpy(), torch.tensor(...) of a result), or "
                 "from parameters with requires_grad=False.",
                 "传给 backward() 的张量与任何参数都不相连：它是在 torch.no_grad() 下算的、被断开了（.detach()、.item()、"
                 ".numpy()、对结果再用 torch.tensor(...)），或者参数的 requires_grad=False。"),
                ("compute the loss from the model's output with torch operations only, outside torch.no_grad(), "
                 "and do not set loss.requires_grad = True (that hides the cut)",
                 "只用 torch 运算从模型输出计算损失，不要放在 torch.no_grad() 里，也不要设置 loss.requires_grad = True（那只会掩盖断开）"))
    if "second time" in text:
        return (("backward() went through part of a graph that an earlier backward() had already freed: a tensor "
                 "computed once (before the loop, or a hidden state carried from the previous step) is reused "
                 "in every step's loss.", "backward() 经过了上一次 backward() 已释放的计算图：某个只算了一次的张量"
                 "（在循环之前算的，或从上一步带过来的隐藏状态）在每一步的损失里被重复使用。"),
                ("compute that tensor inside the loop, or cut it from the old graph: hidden = hidden.detach(); "
                 "retain_graph=True only hides the cause", "在循环里重新计算这个张量，或把它从旧图上断开：hidden = hidden.detach()；"
                 "retain_graph=True 只会掩盖原因"))
    if "inplace operation" in text or "in-place operation" in text:
        return (("A tensor that backward() needs was changed in place (x += ..., x[...] = ..., relu(inplace=True), "
                 "an optimizer step) after it was used.", "backward() 需要的某个张量在使用后被原地修改了（x += ...、"
                 "x[...] = ...、relu(inplace=True)、优化器的 step）。"),
                ("write the update as a new tensor (x = x + ..., inplace=False), or call optimizer.step() only after "
                 "every backward() of the step", "改成生成新张量（x = x + ...，inplace=False），或在这一步所有 backward() 之后再调用 optimizer.step()"))
    return None


def _inference(f: Failure) -> tuple[Words, Words] | None:
    o = next((o for o in f.operands if o.inference), None)
    if o is None or "inference tensor" not in f.message.lower():  # (grad mode now is not the crash's: the message)
        return None
    return ((f"`{o.name}` {fmt_shape(o.shape)} was made under torch.inference_mode(); such tensors cannot take part "
             f"in computations autograd records (training).",
             f"`{o.name}` {fmt_shape(o.shape)} 是在 torch.inference_mode() 下产生的；这种张量不能参与 autograd 记录的计算（训练）。"),
            (f"compute it under torch.no_grad() instead (it can still be trained on), or use {o.name}.clone() "
             f"outside inference mode", f"改在 torch.no_grad() 下计算（之后仍可用于训练），或在推理模式外使用 {o.name}.clone()"))


def _requires_grad_flag(f: Failure) -> tuple[Words, Words] | None:
    if f.op != "setting .requires_grad":
        return None
    o = next((o for o in f.operands if not o.leaf), None)
    if o is None:
        return None
    return ((f"`{o.name}` was computed from other tensors (it has a grad_fn), so it is not a leaf and its "
             f"requires_grad flag cannot be changed.", f"`{o.name}` 是由其他张量算出来的（有 grad_fn），不是叶子张量，"
             f"不能修改它的 requires_grad。"),
            (f"start a new leaf from its values: {o.name} = {o.name}.detach().requires_grad_(True)",
             f"用它的值新建一个叶子张量：{o.name} = {o.name}.detach().requires_grad_(True)"))


def _leaf_inplace(f: Failure) -> tuple[Words, Words] | None:
    if "leaf Variable that requires grad" not in f.message and "a leaf Variable" not in f.message:
        return None
    return (("A parameter (a leaf tensor with requires_grad=True) was changed in place while autograd records, "
             "e.g. a manual update w -= lr * w.grad.", "在 autograd 记录时原地修改了参数（requires_grad=True 的叶子张量），"
             "例如手写的更新 w -= lr * w.grad。"),
            ("do manual updates inside `with torch.no_grad():`, or use an optimizer",
             "把手写的更新放进 `with torch.no_grad():`，或改用优化器"))


def _to_python(f: Failure) -> tuple[Words, Words] | None:
    short, text = _short(f.op), f.message
    x = f.operands[0] if f.operands else None
    if (short == "item" or "only one element tensors" in text) and x is not None and math.prod(x.shape) != 1:
        return ((f".item() (or float()/int()) needs a tensor with one element; `{x.name}` has shape "
                 f"{fmt_shape(x.shape)}.", f".item()（或 float()/int()）只能用于一个元素的张量；`{x.name}` 的形状是 {fmt_shape(x.shape)}。"),
                ("reduce it first (x.mean().item()), or convert the whole tensor: x.tolist()",
                 "先归约（x.mean().item()），或整体转换：x.tolist()"))
    if short == "numpy" or "numpy()" in text or "to numpy" in text:
        return ((f"`.numpy()` works only on a CPU tensor outside the graph; "
                 f"{'`' + x.name + '` is on ' + x.device + (' and requires grad' if x.requires_grad else '') if x else 'this one is not'}.",
                 f"`.numpy()` 只能用于 CPU 上且不在计算图中的张量；"
                 f"{'`' + x.name + '` 在 ' + x.device + (' 上且需要梯度' if x.requires_grad else ' 上') if x else '这个张量不是'}。"),
                ("convert with x.detach().cpu().numpy()", "这样转换：x.detach().cpu().numpy()"))
    if "Boolean value of Tensor" in text:
        return (("A tensor with several elements was used as a condition (if / while / and / or).",
                 "一个有多个元素的张量被当作条件使用（if / while / and / or）。"),
                ("say which: (x > 0).any(), (x > 0).all(), or compare one element: x.item() > 0",
                 "说清楚要哪种：(x > 0).any()、(x > 0).all()，或比较单个元素：x.item() > 0"))
    return None


def _view(f: Failure) -> tuple[Words, Words] | None:
    if "view size is not compatible" not in f.message and not (_short(f.op) == "view" and "stride" in f.message):
        return None
    return (("view() only re-labels memory; this tensor is not contiguous (it was transposed, permuted or "
             "sliced), so its elements are not laid out in the order view() needs.",
             "view() 只改变对同一块内存的解释；这个张量不连续（被转置、permute 或切片过），元素顺序不符合 view() 的要求。"),
            ("use x.reshape(...) (copies when needed) or x.contiguous().view(...)",
             "改用 x.reshape(...)（必要时会复制），或 x.contiguous().view(...)"))


def _optimizer_leaf(f: Failure) -> tuple[Words, Words] | None:
    if "non-leaf Tensor" not in f.message:
        return None
    return (("The optimizer was given a tensor computed from another (e.g. torch.randn(..., requires_grad=True)"
             ".to(device) or w * 2), not a leaf tensor it can update.",
             "优化器收到的是由别的张量算出来的张量（例如 torch.randn(..., requires_grad=True).to(device) 或 w * 2），"
             "而不是它能更新的叶子张量。"),
            ("create the tensor where it lives: torch.randn(..., device=device, requires_grad=True), or wrap it in "
             "nn.Parameter", "直接在目标设备上创建：torch.randn(..., device=device, requires_grad=True)，或用 nn.Parameter 包起来"))


def _device_assert(f: Failure) -> tuple[Words, Words] | None:
    if "device-side assert" not in f.message:
        return None
    return (("A GPU kernel found a bad index; the usual culprit is a class label outside 0..C-1 or a token id "
             "not below the embedding's size. The line shown may not be the one that failed (GPU work is "
             "asynchronous).", "GPU 内核发现了越界的索引；最常见的原因是类别标签不在 0..C-1 内，或词元 id 不小于 embedding 的大小。"
             "显示的那一行不一定是出错的那一行（GPU 是异步执行的）。"),
            ("run once on the CPU (or with CUDA_LAUNCH_BLOCKING=1) to get the real error, and check "
             "print(labels.min(), labels.max()) against the number of outputs",
             "先在 CPU 上运行一次（或设置 CUDA_LAUNCH_BLOCKING=1）看到真正的错误，并用 print(labels.min(), labels.max()) 对照输出个数"))


def _loss_shapes(f: Failure) -> tuple[Words, Words] | None:
    short = _short(f.op)
    if not (short.endswith("_loss") or short in ("cross_entropy", "nll_loss")) or len(f.operands) < 2:
        return None
    inp = next((o for o in f.operands if o.name == "input"), f.operands[0])
    tgt = next((o for o in f.operands if o.name == "target"), f.operands[1])
    if short in ("cross_entropy", "nll_loss"):
        if tgt.dtype in _FLOAT and tgt.shape != inp.shape:
            return ((f"Class-index targets must be integers (int64); `{tgt.name}` is {tgt.dtype} with shape "
                     f"{fmt_shape(tgt.shape)} for scores of shape {fmt_shape(inp.shape)}.",
                     f"类别下标形式的目标必须是整数（int64）；`{tgt.name}` 是 {tgt.dtype}，形状 {fmt_shape(tgt.shape)}，"
                     f"而得分的形状是 {fmt_shape(inp.shape)}。"),
                    ("pass class indices as int64: loss_fn(out, y.long())", "把类别下标转成 int64：loss_fn(out, y.long())"))
        if len(tgt.shape) == len(inp.shape) and tgt.dtype in _INTS:
            return ((f"Cross-entropy takes scores (N, C) and class indices (N,); the target `{tgt.name}` has shape "
                     f"{fmt_shape(tgt.shape)}, like one-hot rows or a column.",
                     f"交叉熵需要得分 (N, C) 和类别下标 (N,)；目标 `{tgt.name}` 的形状是 {fmt_shape(tgt.shape)}，像是独热编码或一列。"),
                    ("give class indices: y.argmax(dim=1) for one-hot rows, y.squeeze(1) for a column",
                     "传类别下标：独热编码用 y.argmax(dim=1)，一列用 y.squeeze(1)"))
        return None
    if inp.shape != tgt.shape:
        return ((f"The loss compares `{inp.name}` {fmt_shape(inp.shape)} with `{tgt.name}` {fmt_shape(tgt.shape)}; "
                 f"they must have the same shape.", f"损失比较的是 `{inp.name}` {fmt_shape(inp.shape)} 和 "
                 f"`{tgt.name}` {fmt_shape(tgt.shape)}；两者形状必须相同。"),
                ("reshape the target to the output's shape, e.g. y.view(-1, 1) for (N,) targets of an (N, 1) output",
                 "把目标变成输出的形状，例如输出是 (N, 1) 而目标是 (N,) 时用 y.view(-1, 1)"))
    if tgt.dtype in _INTS and inp.dtype in _FLOAT:
        return ((f"`{tgt.name}` is {tgt.dtype}; this loss needs a floating-point target like its input.",
                 f"`{tgt.name}` 是 {tgt.dtype}；这个损失需要和输入一样的浮点目标。"),
                ("convert the target: y.float()", "转换目标类型：y.float()"))
    return None


def _collate(f: Failure) -> tuple[Words, Words] | None:
    if "default_collate" not in f.message and "collate" not in (f.op or ""):
        return None
    return (("The DataLoader could not put the samples into a batch: the dataset returns something that is not "
             "a tensor, number or NumPy array (e.g. a PIL image), or samples of different sizes.",
             "DataLoader 无法把样本拼成一个 batch：数据集返回的不是张量、数字或 NumPy 数组（例如 PIL 图片），或者样本大小不一。"),
            ("make __getitem__ return tensors of one size (transforms.ToTensor(), a resize), or give the DataLoader a "
             "collate_fn", "让 __getitem__ 返回同样大小的张量（transforms.ToTensor()、调整大小），或给 DataLoader 一个 collate_fn"))


def _shapes(ops: list[Operand]) -> str:
    return " and ".join(f"`{o.name}` {fmt_shape(o.shape)}" for o in ops)


RULES: list[Rule] = [_devices, *_crash_values.RULES, *_crash_shapes.RULES, _dtypes, _dot, _matmul, _linear_features,
                     _inference, _requires_grad_flag, _backward, _leaf_inplace, _to_python, _view, _optimizer_leaf,
                     _device_assert, _loss_shapes, _collate]


def cause_of(f: Failure) -> tuple[Words, Words] | None:
    """(cause, fix) of the first rule the facts satisfy, or ``None``."""
    for rule in RULES:
        found = rule(f)
        if found is not None:
            return found
    return None
