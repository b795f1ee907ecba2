"""Explainers for shape errors raised by plain tensor operations in the user's own code (torch.dot,
torch.mv, indexing, a ``dim=`` argument), outside any layer or loss: the shapes of the tensors named on
the failing line, and the usual cause (most often a single sample without its batch dimension)."""

from __future__ import annotations

import linecache
import re
from typing import Any

import torch

from trainwell.doctor.checks._error_base import ErrorCheck, Explanation
from trainwell.doctor.checks._error_parsing import Context, Parsed, fmt
from trainwell.doctor.where import _is_user

_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\[?)")


def line_tensors(ctx: Context) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of the tensors the failing line of the user's code names (variables and attributes); an
    indexed one is named ``x[...]``, with the shape of the whole tensor ``x``."""
    frame = next((f for f in reversed(ctx.frames) if _is_user(f.f_code.co_filename)), None)
    if frame is None:
        return []
    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno)  # a traceback's frame stopped at that line
    found: list[tuple[str, tuple[int, ...]]] = []
    for name, indexed in dict.fromkeys(_NAME.findall(text.split("#")[0])):
        parts = name.split(".")
        value: Any = frame.f_locals.get(parts[0], frame.f_globals.get(parts[0]))
        k = 1
        while k < len(parts) and value is not None and not isinstance(value, torch.Tensor):  # self.w, not x.argmax
            value, k = getattr(value, parts[k], None), k + 1
        label = ".".join(parts[:k]) + ("[...]" if indexed and k == len(parts) else "")
        if isinstance(value, torch.Tensor) and not any(seen == label for seen, _ in found):
            found.append((label, tuple(value.shape)))
    return found[:4]


def on_line(ctx: Context) -> tuple[str, str]:
    """" On that line: `x` (3,), `w` (4,)." in both languages ("" when the line names no tensor)."""
    named = line_tensors(ctx)
    if not named:
        return "", ""
    en = ", ".join(f"`{n}` " + (f"(from a tensor of shape {fmt(s)})" if n.endswith("]") else fmt(s)) for n, s in named)
    zh = "，".join(f"`{n}` " + (f"（取自形状为 {fmt(s)} 的张量）" if n.endswith("]") else fmt(s)) for n, s in named)
    return f" On that line: {en}.", f"那一行里：{zh}。"


def _dim_range(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    lo, hi, got = (int(v) for v in p.groups)
    nd = hi + 1
    shown = on_line(ctx)
    ev = {"ndim": nd, "dim": got, "tensors": line_tensors(ctx)}
    head = (f"An operation asked for dimension {got} of a {nd}-dimensional tensor, which only has dimensions "
            f"{lo}..{hi}.{shown[0]}", f"某个运算要用 {nd} 维张量的第 {got} 维，而它只有第 {lo}..{hi} 维。{shown[1]}")
    if nd == 1:
        return Explanation(
            (head[0] + " A single sample without a batch dimension gives 1-D outputs: model(x) on x of shape "
                       "(features,) returns (classes,), so dim=1 does not exist.",
             head[1] + "没有 batch 维的单个样本会得到一维输出：对形状为 (特征数,) 的 x 调用 model(x)，返回的是 (类别数,)，"
                       "所以不存在 dim=1。"),
            ("give the sample its batch dimension: out = model(x.unsqueeze(0))  # (features,) -> (1, features); "
             "or use dim=-1, which is always the last dimension",
             "给样本加上 batch 维：out = model(x.unsqueeze(0))  # (特征数,) -> (1, 特征数)；或用 dim=-1，它总是最后一维"), ev)
    return Explanation(
        (head[0], head[1]),
        ("count the dimensions with print(x.shape) and pass an existing one; dim=-1 is always the last",
         "用 print(x.shape) 数一数维度，传一个存在的维度；dim=-1 总是最后一维"), ev)


def _too_many_indices(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    nd = int(p.groups[0])
    shown = on_line(ctx)
    return Explanation(
        (f"A tensor with {nd} dimension(s) was indexed with more indices than that (e.g. x[:, 0] on a 1-D "
         f"tensor).{shown[0]} Often a single sample without its batch dimension.",
         f"一个 {nd} 维张量被用多于 {nd} 个下标索引（例如对一维张量写 x[:, 0]）。{shown[1]}"
         f"通常是没有 batch 维的单个样本。"),
        ("index with as many positions as the tensor has dimensions, or add the batch dimension: x = x.unsqueeze(0)",
         "下标个数不要超过张量的维数，或加上 batch 维：x = x.unsqueeze(0)"),
        {"ndim": nd, "tensors": line_tensors(ctx)})


def _index_bounds(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    i, dim, size = (int(v) for v in p.groups)
    shown = on_line(ctx)
    return Explanation(
        (f"Index {i} was used in dimension {dim}, which has size {size} (valid indices 0..{size - 1}).{shown[0]}",
         f"在第 {dim} 维上用了索引 {i}，而这一维大小为 {size}（合法索引 0..{size - 1}）。{shown[1]}"),
        (f"keep indices below {size}: check the loop bounds and labels (class labels run 0..C-1), e.g. "
         f"print(idx.min(), idx.max())", f"索引要小于 {size}：检查循环边界和标签（类别标签是 0..C-1），例如 "
         f"print(idx.min(), idx.max())"),
        {"index": i, "dim": dim, "size": size, "tensors": line_tensors(ctx)})


def _dot(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    a, b = int(p.groups[0]), int(p.groups[1])
    shown = on_line(ctx)
    return Explanation(
        (f"A product of two vectors (torch.dot, or @ / matmul on 1-D tensors) got lengths {a} and {b}; they must be "
         f"equal.{shown[0]} Often a weight vector sized for one more (or one fewer) feature, e.g. a bias folded "
         f"into the weights without adding a column of ones to the input.",
         f"两个向量的乘积（torch.dot，或一维张量的 @ / matmul）得到的长度是 {a} 和 {b}，必须相等。{shown[1]}"
         f"通常是权重向量多（或少）了一个特征，例如把偏置并进了权重，却没有给输入加一列 1。"),
        ("size the weights to the features: w = torch.zeros(x.shape[-1], requires_grad=True) and keep the bias "
         "separate (pred = x @ w + b)", "按特征数建权重：w = torch.zeros(x.shape[-1], requires_grad=True)，"
         "偏置单独保存（pred = x @ w + b）"),
        {"sizes": [a, b], "tensors": line_tensors(ctx)})


def _mv(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    r, c, v = int(p.groups[1]), int(p.groups[2]), int(p.groups[3])
    shown = on_line(ctx)
    return Explanation(
        (f"A matrix of shape ({r}x{c}) was multiplied by a vector of length {v}; the vector needs {c} "
         f"elements.{shown[0]}",
         f"形状为 ({r}x{c}) 的矩阵乘以长度为 {v} 的向量；向量需要 {c} 个元素。{shown[1]}"),
        ("make the vector as long as the matrix has columns, or transpose the matrix: y = W.T @ v",
         "让向量长度等于矩阵的列数，或转置矩阵：y = W.T @ v"), {"matrix": [r, c], "vector": v,
                                                   "tensors": line_tensors(ctx)})
