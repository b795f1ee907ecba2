"""nonfinite-loss: the loss became NaN / inf, and which operation made it so.

At the first non-finite loss, before backward() frees the graph, the autograd graph is
walked back from the loss. Each node keeps the tensors its backward needs (``_saved_*``):
the op that first turned finite values into NaN / inf is the one whose saved inputs are
finite while a rule of its own fires (log of 0, division by 0, sqrt of a negative, exp
overflow, ...) or whose output is known to be non-finite. Non-finite weights or data seen
in the graph are named instead: then the op is only the messenger.
"""

from __future__ import annotations

import math

import re
from dataclasses import dataclass, field
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks.gradient_scale import REMEDY
from trainwell.doctor.events import BackwardEvent

MAX_NODES = 2000  # bound on the graph walk (it runs once, at the first bad loss)
_OUTPUT_NAMES = ("result", "buffer", "save_", "running_")  # saved tensors that are not the op's inputs


@dataclass
class _Node:
    fn: Any  # the autograd node
    depth: int
    children: list[int] = field(default_factory=list)  # indices of the nodes that produced its inputs
    inputs: dict[str, torch.Tensor] = field(default_factory=dict)
    outputs: dict[str, torch.Tensor] = field(default_factory=dict)


def op_name(fn: Any) -> str:
    """``LogBackward0`` -> ``log``; ``MseLossBackward0`` -> ``mse_loss``."""
    name = re.sub(r"Backward\d*$", "", type(fn).__name__)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower() or type(fn).__name__


def _finite(t: torch.Tensor) -> bool:
    return not t.is_floating_point() or bool(torch.isfinite(t.detach()).all())


def _saved(fn: Any) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(inputs, outputs) among the tensors a node saved for backward."""
    inputs: dict[str, torch.Tensor] = {}
    outputs: dict[str, torch.Tensor] = {}
    for attr in dir(fn):
        if not attr.startswith("_saved_") or attr.endswith(("_sizes", "_strides", "_numel")):
            continue
        try:
            value = getattr(fn, attr)
        except Exception:  # noqa: BLE001 - freed or unreadable saved tensor
            continue
        if isinstance(value, torch.Tensor):
            name = attr[len("_saved_"):]
            (outputs if name.startswith(_OUTPUT_NAMES) else inputs)[name] = value
    return inputs, outputs


def walk(root: Any) -> list[_Node]:
    """The graph under ``root``, breadth first, at most MAX_NODES nodes."""
    nodes: list[_Node] = []
    index: dict[int, int] = {}
    index[id(root)] = 0
    nodes.append(_Node(root, 0))
    head = 0
    while head < len(nodes):
        node = nodes[head]
        head += 1
        node.inputs, node.outputs = _saved(node.fn)
        for child, _ in getattr(node.fn, "next_functions", ()):
            if child is None:
                continue
            if id(child) not in index:
                if len(nodes) >= MAX_NODES:
                    continue
                index[id(child)] = len(nodes)
                nodes.append(_Node(child, node.depth + 1))
            node.children.append(index[id(child)])
    return nodes


def rule(node: _Node) -> tuple[str, dict[str, Any]] | None:
    """Why this op makes NaN / inf from finite inputs, by its own math; ``None`` if no rule fires."""
    name = op_name(node.fn)
    ins = {k: v.detach() for k, v in node.inputs.items()}
    outs = {k: v.detach() for k, v in node.outputs.items()}
    x, other, res = ins.get("self"), ins.get("other"), outs.get("result")
    exponent = ins.get("exponent")
    fp = torch.is_floating_point
    if name in ("log", "log2", "log10") and x is not None and fp(x) and bool((x <= 0).any()):
        return "log", {"op": name, "bad": int((x <= 0).sum()), "min": float(x.min())}
    if name == "log1p" and x is not None and fp(x) and bool((x <= -1).any()):
        return "log", {"op": name, "bad": int((x <= -1).sum()), "min": float(x.min())}
    if name == "div" and other is not None and bool((other == 0).any()):
        return "div", {"op": name, "bad": int((other == 0).sum())}
    if name == "xlogy" and other is not None and bool((other <= 0).any()):
        return "log", {"op": name, "bad": int((other <= 0).sum()), "min": float(other.min())}
    if name == "pow" and x is not None and fp(x):
        e = exponent if exponent is not None else getattr(node.fn, "_saved_exponent", None)
        if isinstance(e, (int, float)) or isinstance(e, torch.Tensor):
            e_t = torch.as_tensor(e, dtype=x.dtype)
            frac = e_t != e_t.round()
            if bool(((x < 0) & frac).any()):
                return "sqrt", {"op": name, "bad": int(((x < 0) & frac).sum()), "min": float(x.min())}
            if bool(((x == 0) & (e_t < 0)).any()):
                return "div", {"op": name, "bad": int(((x == 0) & (e_t < 0)).sum())}
    if name in ("sqrt", "rsqrt") and res is not None and bool(torch.isnan(res).any()):
        return "sqrt", {"op": name, "bad": int(torch.isnan(res).sum()), "min": float("nan")}
    if name in ("rsqrt", "reciprocal") and res is not None and bool(torch.isinf(res).any()):
        return "div", {"op": name, "bad": int(torch.isinf(res).sum())}
    if name in ("exp", "exp2", "expm1", "cosh", "sinh") and res is not None and bool(torch.isinf(res).any()):
        return "exp", {"op": name, "bad": int(torch.isinf(res).sum())}
    if name in ("acos", "asin") and x is not None and bool((x.abs() > 1).any()):
        return "sqrt", {"op": name, "bad": int((x.abs() > 1).sum()), "min": float(x.min())}
    if name in ("std", "var") and x is not None and res is not None and not _finite(res) and x.numel() <= 1:
        return "std", {"op": name, "bad": 1}
    return None


def diagnose(loss: torch.Tensor) -> tuple[str, dict[str, Any]]:
    """(cause, details) for a non-finite loss: "weights", "data", an op rule, "op" or "unknown"."""
    nodes = walk(loss.grad_fn)
    bad_weights = [v.detach() for n in nodes if (v := getattr(n.fn, "variable", None)) is not None and not _finite(v)]
    if bad_weights:
        return "weights", {"tensors": len(bad_weights), "values": sum(int((~torch.isfinite(v)).sum())
                                                                       for v in bad_weights)}
    # A non-finite tensor no gradient flows into came from outside the model: the batch or targets.
    for n in sorted(nodes, key=lambda n: -n.depth):
        for name, t in n.inputs.items():
            if t.grad_fn is None and not t.requires_grad and not _finite(t):
                return "data", {"op": op_name(n.fn), "arg": name, "values": int((~torch.isfinite(t.detach())).sum())}
    position = {id(n.fn): i for i, n in enumerate(nodes)}
    makes_bad: set[int] = {0}  # nodes whose output is known to be non-finite; the loss's own node is one
    for i, n in enumerate(nodes):
        if any(not _finite(t) for t in n.outputs.values()):
            makes_bad.add(i)
        for t in n.inputs.values():
            if t.grad_fn is not None and not _finite(t) and id(t.grad_fn) in position:
                makes_bad.add(position[id(t.grad_fn)])
    suspects: dict[int, tuple[str, dict[str, Any]]] = {}
    for i, n in enumerate(nodes):
        if not all(_finite(t) for t in n.inputs.values()):
            continue  # it received NaN / inf: the cause is further up
        found = rule(n)
        if found is not None:
            suspects[i] = found
        elif i in makes_bad:
            big = max((float(t.detach().abs().max()) for t in n.inputs.values() if t.is_floating_point() and t.numel()),
                      default=0.0)
            suspects[i] = ("overflow" if big > 1e15 else "op", {"op": op_name(n.fn), "largest": big})
    if not suspects:
        return "unknown", {}
    # The first one in forward order: no other suspect upstream of it.
    upstream = {i: _reachable(nodes, i) for i in suspects}
    firsts = [i for i in suspects if not any(j in upstream[i] for j in suspects if j != i)]
    best = max(firsts or list(suspects), key=lambda i: (suspects[i][0] not in ("op", "overflow"), nodes[i].depth))
    return suspects[best]


def _reachable(nodes: list[_Node], start: int) -> set[int]:
    seen: set[int] = set()
    stack = list(nodes[start].children)
    while stack:
        i = stack.pop()
        if i not in seen:
            seen.add(i)
            stack.extend(nodes[i].children)
    return seen


_CAUSE = {
    "log": {"en": "`{op}` received {bad} value(s) <= 0 (smallest {min}): log(0) = -inf and the log of a negative "
                  "number is NaN.",
            "zh": "`{op}` 收到了 {bad} 个 <= 0 的值（最小 {min}）：log(0) = -inf，负数的 log 是 NaN。"},
    "div": {"en": "`{op}` divided by zero at {bad} place(s): x / 0 = inf and 0 / 0 = NaN.",
            "zh": "`{op}` 在 {bad} 处除以了 0：x / 0 = inf，0 / 0 = NaN。"},
    "sqrt": {"en": "`{op}` received {bad} negative value(s) (smallest {min}): the square root (or a fractional "
                   "power) of a negative number is NaN.",
             "zh": "`{op}` 收到了 {bad} 个负数（最小 {min}）：负数的平方根（或分数次幂）是 NaN。"},
    "exp": {"en": "`{op}` overflowed at {bad} place(s): exp(x) is inf in float32 once x > 88.",
            "zh": "`{op}` 在 {bad} 处溢出：float32 中 x > 88 时 exp(x) 就是 inf。"},
    "std": {"en": "`{op}` was taken over a single value: the unbiased std / var of one element is NaN (often a last "
                  "batch of size 1).",
            "zh": "`{op}` 只作用在一个值上：单个元素的无偏 std / var 是 NaN（常见于最后一个批次只有 1 个样本）。"},
    "overflow": {"en": "`{op}` received finite values as large as {largest} and overflowed: the model's values are "
                       "blowing up, which means training is diverging (see lr-too-high).",
                 "zh": "`{op}` 收到的有限值大到 {largest}，发生了溢出：模型中的数值在爆炸，说明训练正在发散（参见 lr-too-high）。"},
    "overflow_start": {"en": "`{op}` received finite values as large as {largest} and overflowed before any optimizer "
                             "step: the untrained model's values are already blowing up, so the learning rate is "
                             "not the cause; the initialization is (see exploding-gradients).",
                       "zh": "`{op}` 收到的有限值大到 {largest}，在任何一次优化器更新之前就溢出了：未经训练的模型中的数值已经在爆炸，"
                             "所以原因不在学习率，而在初始化（参见 exploding-gradients）。"},
    "op": {"en": "`{op}` is the first operation whose output is NaN / inf while its saved inputs are finite.",
           "zh": "`{op}` 是第一个输入有限、输出却是 NaN / inf 的运算。"},
    "weights": {"en": "{tensors} weight tensor(s) already hold {values} NaN / inf values: an earlier update "
                      "blew them up, so training diverged (see lr-too-high).",
                "zh": "已有 {tensors} 个权重张量含有 {values} 个 NaN / inf：之前的某次更新把它们撑爆了，训练已经发散"
                      "（参见 lr-too-high）。"},
    "weights_data": {"en": "{tensors} weight tensor(s) already hold {values} NaN / inf values: an earlier batch "
                           "with NaN / inf inputs made the gradients non-finite and the update copied them into the "
                           "weights (see nonfinite-input).",
                     "zh": "已有 {tensors} 个权重张量含有 {values} 个 NaN / inf：之前某个含 NaN / inf 的输入批次让梯度变成非有限值，"
                           "更新又把它们写进了权重（参见 nonfinite-input）。"},
    "data": {"en": "The NaN / inf values came in with the data: a tensor that is not computed by the model (the "
                   "input batch or the targets) reached `{op}` with {values} non-finite value(s) "
                   "(see nonfinite-input).",
             "zh": "NaN / inf 来自数据：一个不是模型算出来的张量（输入批次或目标）带着 {values} 个非有限值进入了 `{op}`"
                   "（参见 nonfinite-input）。"},
    "unknown": {"en": "The operation that produced it could not be located in the autograd graph.",
                "zh": "无法在自动求导图中找到产生它的运算。"},
}
_FIX = {
    "log": {"en": "keep the argument of log positive, or stay in log space: torch.log(p.clamp_min(1e-8))  # better: "
                  "F.log_softmax(logits, 1) or F.cross_entropy(logits, y) instead of log(softmax(...))",
            "zh": "让 log 的参数保持为正，或者直接在对数空间计算：torch.log(p.clamp_min(1e-8))  # 更好的做法："
                  "用 F.log_softmax(logits, 1) 或 F.cross_entropy(logits, y) 代替 log(softmax(...))"},
    "div": {"en": "guard the denominator: x / d.clamp_min(1e-8)  # e.g. a masked mean: (loss * m).sum() / "
                  "m.sum().clamp_min(1)",
            "zh": "保护分母不为 0：x / d.clamp_min(1e-8)  # 例如带掩码的平均：(loss * m).sum() / m.sum().clamp_min(1)"},
    "sqrt": {"en": "keep the argument non-negative: torch.sqrt(x.clamp_min(1e-12))",
             "zh": "让参数保持非负：torch.sqrt(x.clamp_min(1e-12))"},
    "exp": {"en": "use the stable built-ins instead of exp by hand: torch.logsumexp(x, dim) / F.softmax(x, dim) / "
                  "F.softplus(x)",
            "zh": "不要手写 exp，改用数值稳定的内置函数：torch.logsumexp(x, dim) / F.softmax(x, dim) / F.softplus(x)"},
    "std": {"en": "drop incomplete batches or use the biased estimate: DataLoader(..., drop_last=True)  # or "
                  "x.std(unbiased=False)",
            "zh": "丢弃不完整的批次，或使用有偏估计：DataLoader(..., drop_last=True)  # 或 x.std(unbiased=False)"},
    "overflow": {"en": "lower the learning rate (e.g. 10x) and clip gradients: "
                       "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
                 "zh": "降低学习率（例如降 10 倍）并裁剪梯度：torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"},
    "weights": {"en": "lower the learning rate (e.g. 10x) and clip gradients: "
                      "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
                "zh": "降低学习率（例如降 10 倍）并裁剪梯度：torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"},
    "data": {"en": "clean the data before training: x = torch.nan_to_num(x)  # or drop the bad rows: "
                   "x = x[torch.isfinite(x).all(dim=1)]",
             "zh": "训练前清洗数据：x = torch.nan_to_num(x)  # 或丢弃坏行：x = x[torch.isfinite(x).all(dim=1)]"},
}
_FIX["weights_data"] = _FIX["data"]
_FIX["overflow_start"] = dict(zip(("en", "zh"), REMEDY["init"], strict=True))
_FIX["op"] = _FIX["unknown"] = {
    "en": "check that operation's inputs for zeros, negatives or huge values, and use the stable built-ins "
          "(F.cross_entropy, F.log_softmax, torch.logsumexp) instead of the math written by hand",
    "zh": "检查该运算的输入里是否有 0、负数或极大的值，并改用数值稳定的内置函数（F.cross_entropy、F.log_softmax、"
          "torch.logsumexp）代替手写的数学公式"}


@register
class NonfiniteLoss(Check):
    id = "nonfinite-loss"
    severity = "error"
    summary = "the loss became NaN / inf, with the operation that produced it"
    text = {
        "en": Text(
            title="The loss became {value}",
            general="The loss became NaN or infinite",
            message="The loss passed to backward() is {value} (backward call {call}). {cause} One backward() with a "
                    "non-finite loss fills the gradients with NaN, and the next optimizer step turns the weights into "
                    "NaN for good.",
            fix="{remedy}"),
        "zh": Text(
            title="损失变成了 {value}",
            general="损失变成了 NaN 或无穷大",
            message="传给 backward() 的损失是 {value}（第 {call} 次 backward）。{cause}对非有限的损失做一次 backward() "
                    "会让梯度全部变成 NaN，接下来的一次优化器更新就会让权重永久变成 NaN。",
            fix="{remedy}"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.read = 0  # how many of session.losses were looked at

    @sampled_only  # the losses of other steps are read back here, all together: those steps never wait
    def on_backward_pre(self, ev: BackwardEvent) -> None:
        t = ev.tensor
        if self.reported or not t.is_floating_point() or t.numel() != 1:
            return
        losses = self.session.losses
        first_bad = next((i for i in range(self.read, len(losses)) if not math.isfinite(losses[i])), None)
        self.read = len(losses)
        now = float(t.detach())  # one number: cheaper than a tensor reduction, and read anyway after backward
        value, call = now, self.session.backward_count + 1
        if first_bad is not None:  # it happened on a step that was not sampled
            value, call = losses[first_bad], first_bad + 1
        if math.isfinite(value):
            return
        with torch.no_grad():  # the graph at hand explains it only if this loss is non-finite too
            cause, details = diagnose(t) if t.grad_fn is not None and not math.isfinite(now) else ("unknown", {})
        if cause == "weights" and self.session.nonfinite_data:
            cause = "weights_data"
        if cause == "overflow" and self.session.step == 0:
            cause = "overflow_start"  # no update has happened yet: not a divergence
        lang = self.session.lang if self.session.lang in ("en", "zh") else "en"
        fmt = {k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in details.items()}
        self.report(ev.where, {"loss": str(value), "cause": cause, **details},
                    value=str(value), call=call,
                    cause=_CAUSE[cause][lang].format(**fmt), remedy=_FIX[cause][lang].format(**fmt))
