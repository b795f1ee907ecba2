"""no-nonlinearity: two linear layers in a row with nothing non-linear between them.

Judged from the data flow of a model's first forward pass with gradients on: the tensor a
Linear/Conv layer returned reaches the next Linear (or a Conv output reaches a Conv/Linear)
unchanged, or only through Flatten / Unflatten / Dropout / Identity modules, or through
functional dropout and reshapes in ``forward()`` (``F.dropout``, ``.view``: followed on the
autograd graph, a few nodes back). Two linear maps in a
row are one linear map, so the extra layer adds parameters but no expressive power.

Stays quiet on: functional activations (they make a new tensor, so no link exists), in-place
activations (they bump the tensor's version counter), tensors used more than once (parallel
heads, residual sums, attention: checked on the autograd graph), low-rank bottlenecks
(LoRA, linear autoencoders) and depthwise-separable convolutions, which are deliberate.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn
from torch.nn.modules.conv import _ConvNd
from torch.nn.modules.dropout import _DropoutNd

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.events import ForwardEvent, StepEvent

PASS_THROUGH = (nn.Flatten, nn.Unflatten, _DropoutNd, nn.Identity)
# Autograd nodes of functional ops in forward() that keep a map linear: dropout (a product with a constant
# mask: MulBackward0 with one input in the graph), constant scaling and reshapes.
PASS_THROUGH_NODES = {"NativeDropoutBackward0", "MulBackward0", "DivBackward0", "ViewBackward0", "UnsafeViewBackward0",
                      "ReshapeAliasBackward0", "CloneBackward0"}
NODE_HOPS = 4
MAX_GRAPH_NODES = 50_000

Link = tuple[nn.Module, nn.Module, list[torch.Tensor]]  # (first layer, second layer, tensors on the way)


def _key(t: Any) -> tuple[Any, ...] | None:
    """Same memory, shape and layout: the same values (all leaf inputs/outputs are alive, so no reuse)."""
    if not isinstance(t, torch.Tensor) or t.layout != torch.strided or not t.numel():
        return None
    try:
        return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device)
    except (RuntimeError, NotImplementedError):  # tensors without storage (fake / meta)
        return None


def _sizes(m: nn.Module) -> tuple[int, int]:
    if isinstance(m, nn.Linear):
        return m.in_features, m.out_features
    return m.in_channels, m.out_channels  # type: ignore[return-value]


def _path(name: str) -> str:
    """``encoder.2`` -> ``model.encoder[2]``: how the user would write the layer."""
    parts = [f"[{part}]" if part.isdigit() else f".{part}" for part in name.split(".") if part]
    return "model" + "".join(parts)


def _describe(m: nn.Module) -> str:
    a, b = _sizes(m)
    return f"{type(m).__name__}({a}, {b})"


def _deliberate(a: nn.Module, b: nn.Module) -> bool:
    """Low-rank bottlenecks and depthwise-separable convolutions are linear-linear on purpose."""
    if isinstance(a, _ConvNd) and (a.groups > 1 or (isinstance(b, _ConvNd) and b.groups > 1)):
        return True
    same_kind = all(isinstance(m, nn.Linear) for m in (a, b)) or all(isinstance(m, _ConvNd) for m in (a, b))
    if not same_kind:
        return False  # conv -> linear: the sizes do not compare
    (a_in, mid), (_, b_out) = _sizes(a), _sizes(b)
    return mid < min(a_in, b_out)


def find_links(leaf_calls: list[tuple[nn.Module, Any, Any]]) -> list[Link]:
    """Linear->Linear, Conv->Linear and Conv->Conv joined only by pass-through layers."""
    tracked: dict[tuple[Any, ...], tuple[nn.Module, list[torch.Tensor]]] = {}
    links: list[Link] = []
    for module, inp, out in leaf_calls:
        k_in, k_out = _key(inp), _key(out)
        src = tracked.get(k_in) if k_in is not None else None
        if src is None and isinstance(module, (nn.Linear, _ConvNd)) and isinstance(inp, torch.Tensor):
            src = _through_functional(inp, tracked)
        if isinstance(module, PASS_THROUGH):
            if src is not None and k_out is not None:
                tracked[k_out] = (src[0], [*src[1], out])
            continue
        if src is not None:
            tracked.pop(k_in, None)  # anything else that touched it (an in-place ReLU) ends the link
            if isinstance(module, (nn.Linear, _ConvNd)) and not (isinstance(module, _ConvNd)
                                                                 and isinstance(src[0], nn.Linear)):
                links.append((src[0], module, src[1]))
        if k_out is not None:
            tracked.pop(k_out, None)
            if isinstance(module, (nn.Linear, _ConvNd)):
                tracked[k_out] = (module, [out])
    return [link for link in links if not _deliberate(link[0], link[1])]


def _through_functional(inp: torch.Tensor, tracked: dict[tuple[Any, ...], tuple[nn.Module, list[torch.Tensor]]]
                        ) -> tuple[nn.Module, list[torch.Tensor]] | None:
    """The tracked layer whose output reached ``inp`` only through functional dropout / reshapes (the path's
    tensors are not at hand, so the link holds ``inp`` and the layer's output: both must be used once)."""
    node = inp.grad_fn
    for _ in range(NODE_HOPS):
        if node is None or type(node).__name__ not in PASS_THROUGH_NODES:
            return None
        inputs = [n for n, _ in node.next_functions if n is not None]
        if len(inputs) != 1:
            return None  # a product of two tensors in the graph (a gate) is not linear
        node = inputs[0]
        for layer, tensors in tracked.values():
            if tensors[-1].grad_fn is node:
                return layer, [*tensors, inp]
    return None


def _graph_tensors(output: Any, depth: int = 0) -> list[torch.Tensor]:
    """The tensors with a graph in a model's output (a tensor, or a tuple / list / dict of them)."""
    if isinstance(output, torch.Tensor):
        return [output] if output.grad_fn is not None else []
    if depth >= 2:
        return []
    if isinstance(output, Mapping):
        items: list[Any] = list(output.values())
    elif isinstance(output, (list, tuple)):
        items = list(output)
    else:
        return []
    return [t for item in items[:16] for t in _graph_tensors(item, depth + 1)]


def _in_degrees(roots: list[torch.Tensor]) -> tuple[dict[int, int], list[Any]] | None:
    """How many uses (graph edges, or being returned) each autograd node reachable from the outputs has
    (``None``: graph too big to walk)."""
    keep: list[Any] = [t.grad_fn for t in roots]  # holding the node wrappers keeps their ids unique
    seen = {id(n) for n in keep}
    stack = list(keep)
    degree: dict[int, int] = {}
    for n in keep:  # a tensor the model returns is used by the caller too (features returned with logits)
        degree[id(n)] = degree.get(id(n), 0) + 1
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            degree[id(nxt)] = degree.get(id(nxt), 0) + 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                keep.append(nxt)
                stack.append(nxt)
                if len(seen) > MAX_GRAPH_NODES:
                    return None
    return degree, keep


def _used_once(link: Link, degree: dict[int, int]) -> bool:
    """Every tensor between the two layers feeds exactly one thing and was never changed in place."""
    for t in link[2]:
        if t.grad_fn is None or t._version != 0 or degree.get(id(t.grad_fn), 0) != 1:
            return False
    return True


@register
class NoNonlinearity(Check):
    id = "no-nonlinearity"
    severity = "warning"
    summary = "two linear layers in a row with no activation between them collapse into one"
    text = {
        "en": Text(
            title="No activation between {first} and {second}",
            general="No activation between two linear layers",
            message="The output of {first} ({first_type}) goes straight into {second} ({second_type}) with nothing "
                    "non-linear in between. Two linear layers in a row are just one linear layer: the extra layer "
                    "adds parameters but cannot learn anything more, so the model is less powerful than it looks.",
            fix="put an activation after {first}, e.g. nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))  "
                "# or in forward(): x = self.fc2(torch.relu(self.fc1(x)))"),
        "zh": Text(
            title="{first} 和 {second} 之间没有激活函数",
            general="两个线性层之间没有激活函数",
            message="{first}（{first_type}）的输出直接进入了 {second}（{second_type}），中间没有任何非线性操作。"
                    "连续两个线性层其实就等于一个线性层：多出来的那层只增加参数，却学不到更多东西，模型没有看上去那么强。",
            fix="在 {first} 之后加一个激活函数，例如 nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))"
                "  # 或在 forward() 中：x = self.fc2(torch.relu(self.fc1(x)))"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.looked: weakref.WeakSet[nn.Module] = weakref.WeakSet()
        self.pending: list[tuple[weakref.ref[nn.Module], dict[str, Any], str | None]] = []

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if not ev.leaf_calls or not ev.grad_enabled or self.reported or ev.module in self.looked:
            return
        self.looked.add(ev.module)
        links = find_links(ev.leaf_calls)
        roots = _graph_tensors(ev.output) if links else []
        graph = _in_degrees(roots) if roots else None
        if graph is None:
            return
        links = [link for link in links if _used_once(link, graph[0])]
        if links and len(self.pending) < 4:
            names = {id(m): name for name, m in ev.module.named_modules()}
            a, b, _ = links[0]
            values = {"first": _path(names.get(id(a), "")), "second": _path(names.get(id(b), "")),
                      "first_type": _describe(a), "second_type": _describe(b)}
            self.pending.append((weakref.ref(ev.module), values, ev.where))

    @sampled_only
    def on_step(self, ev: StepEvent) -> None:
        # Reported once the model is known to be trained (an optimizer owns its parameters).
        if not self.pending or self.reported or not self.session.sampled:
            return
        for ref, values, where in list(self.pending):
            model = ref()
            if model is not None and self.session.is_trained(model):
                self.report(where, {"first": f"{values['first']} {values['first_type']}",
                                    "second": f"{values['second']} {values['second_type']}"}, **values)
                return
