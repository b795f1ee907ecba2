"""Per-layer model summary: "print the shapes first", without extra dependencies.

``summarize`` runs one forward pass with hooks on every submodule and records,
in call order, each module's output shape and the parameters it owns directly.
When the forward pass fails, the error names the layer that broke the shapes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from torch import nn
from torch.nn.parameter import is_lazy
from torch.utils.hooks import RemovableHandle

from trainwell._errors import TrainwellError

__all__ = ["LayerRow", "ModelSummary", "render_summary", "summarize", "summary_dict"]


@dataclass
class LayerRow:
    """One module call: its dotted name, class name, output shape and own parameters."""

    name: str
    type: str
    output_shape: str
    params: int
    trainable: int
    depth: int


@dataclass
class ModelSummary:
    """The rows of one forward pass plus whole-model totals (shared parameters counted once)."""

    rows: list[LayerRow]
    total_params: int
    trainable_params: int
    input_shape: tuple[int, ...]
    output_shape: str
    param_bytes: int

    @property
    def non_trainable_params(self) -> int:
        """Parameters with ``requires_grad=False``."""
        return self.total_params - self.trainable_params

    @property
    def param_mb(self) -> float:
        """Size of the parameters in megabytes (10**6 bytes)."""
        return self.param_bytes / 1e6


# --------------------------------------------------------------------------- shapes


def _fmt_shape(t: torch.Tensor) -> str:
    """``(1, 32, 28, 28)``; a 0-dim tensor is ``()``."""
    dims = tuple(int(d) for d in t.shape)
    return "(" + ", ".join(str(d) for d in dims) + ")"


def _iter_tensors(obj: Any) -> Iterator[torch.Tensor]:
    """Tensors inside ``obj`` (tensor, list/tuple, dict), depth first, in order."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _iter_tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _iter_tensors(item)


def _output_shape_str(obj: Any) -> str:
    """Shape of a module output: a tensor's shape, the first tensor's shape + ", ..." for
    containers (e.g. LSTM's ``(out, (h, c))``), or ``"-"`` when there is no tensor."""
    if isinstance(obj, torch.Tensor):
        return _fmt_shape(obj)
    first = next(_iter_tensors(obj), None) if isinstance(obj, (list, tuple, dict)) else None
    if first is None:
        return "-"
    return f"{_fmt_shape(first)}, ..."


def _input_shape_str(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """Shapes of every tensor a module received, e.g. ``(1, 800)`` or ``(1, 5, 8), (1, 1, 16)``."""
    tensors = list(_iter_tensors(args)) + list(_iter_tensors(kwargs))
    if not tensors:
        return "- (no tensor inputs)"
    shown = [_fmt_shape(t) for t in tensors[:4]]
    if len(tensors) > 4:
        shown.append("...")
    return ", ".join(shown)


def _own_param_counts(module: nn.Module) -> tuple[int, int]:
    """(all, trainable) parameters owned directly by ``module`` (``recurse=False``)."""
    total = trainable = 0
    for p in module.parameters(recurse=False):
        if is_lazy(p):
            continue
        n = p.numel()
        total += n
        if p.requires_grad:
            trainable += n
    return total, trainable


# --------------------------------------------------------------------------- summarize


@dataclass
class _Frame:
    """A module call that has started (pre-hook ran) but not yet finished."""

    name: str
    type: str
    input_shape: str
    row_index: int
    module_id: int


@dataclass
class _Recorder:
    """State shared by the hooks during the single forward pass."""

    rows: list[LayerRow] = field(default_factory=list)
    stack: list[_Frame] = field(default_factory=list)
    last_done: tuple[str, str, str] | None = None  # (name, type, output shape)


def _label(name: str, type_name: str) -> str:
    return f"'{name}' ({type_name})"


def _failure_error(
    exc: Exception, rec: _Recorder, model: nn.Module, example_desc: str
) -> TrainwellError:
    """Build the "which layer broke the shapes" error from the hook state at failure time."""
    if rec.stack:
        frame = rec.stack[-1]
        failing = _label(frame.name, frame.type)
        received = frame.input_shape
        failing_type = frame.type
    else:
        failing = f"the model's own forward() ({type(model).__name__})"
        received = example_desc
        failing_type = type(model).__name__
    if rec.last_done is None:
        last = "No layer had finished before it"
    else:
        name, type_name, out = rec.last_done
        last = f"The last layer that ran successfully was {_label(name, type_name)}, output {out}"
    message = (
        f"The forward pass failed in {failing}, which received input of shape {received}. "
        f"{last}.\n  Original error: {type(exc).__name__}: {exc}"
    )
    if failing_type == "Linear" and rec.stack:
        last_dim = received.split(",")[-1].strip(" ()") if received.startswith("(") else "?"
        fix = (
            f"make that Linear's in_features match the last dimension of its input "
            f"({last_dim}); after Flatten it must equal the flattened size."
        )
    else:
        fix = (
            "compare that layer's expected input with the previous layer's output shape "
            "(see the rows above it in the summary)."
        )
    return TrainwellError(message, fix=fix)


def _example_shape(example: torch.Tensor | tuple[torch.Tensor, ...]) -> tuple[int, ...]:
    """Shape of the example (the first tensor when a tuple is given)."""
    first = next(_iter_tensors(example), None)
    return tuple(int(d) for d in first.shape) if first is not None else ()


def _deduplicated_params(model: nn.Module) -> list[nn.Parameter]:
    """``model.parameters()`` without duplicates, and skipping uninitialised lazy ones."""
    seen: set[int] = set()
    out: list[nn.Parameter] = []
    for p in model.parameters():
        if id(p) in seen or is_lazy(p):
            continue
        seen.add(id(p))
        out.append(p)
    return out


def summarize(
    model: nn.Module, example: torch.Tensor | tuple[torch.Tensor, ...]
) -> ModelSummary:
    """Run one forward pass of ``model`` on ``example`` and record every module call.

    The model is put in eval mode and run under ``torch.inference_mode()``; every
    module's training flag is restored afterwards and all hooks are removed, even
    when the forward pass raises. A failure is re-raised as ``TrainwellError``
    naming the module that failed, the input shape it received and the last module
    that ran successfully.
    """
    names: dict[int, str] = {}
    for name, module in model.named_modules():
        if module is not model and id(module) not in names:
            names[id(module)] = name

    rec = _Recorder()

    def pre_hook(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        name = names[id(module)]
        type_name = type(module).__name__
        rec.rows.append(LayerRow(name, type_name, "-", 0, 0, depth=len(rec.stack)))
        rec.stack.append(
            _Frame(name, type_name, _input_shape_str(args, kwargs), len(rec.rows) - 1, id(module))
        )

    def post_hook(
        module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any
    ) -> None:
        # Pop down to this module's frame (a child whose exception was caught never finished).
        frame = rec.stack.pop()
        while frame.module_id != id(module) and rec.stack:
            frame = rec.stack.pop()
        row = rec.rows[frame.row_index]
        row.output_shape = _output_shape_str(output)
        row.params, row.trainable = _own_param_counts(module)  # after forward: lazy params exist
        rec.last_done = (row.name, row.type, row.output_shape)

    handles: list[RemovableHandle] = []
    modes = {m: m.training for m in model.modules()}
    args = example if isinstance(example, tuple) else (example,)
    # Lazy modules materialise parameters in their first forward; creating them under
    # inference_mode would make them unusable for training, so use no_grad then.
    has_lazy = any(is_lazy(p) for p in model.parameters())
    grad_ctx: contextlib.AbstractContextManager[Any] = (
        torch.no_grad() if has_lazy else torch.inference_mode()
    )
    try:
        for module in model.modules():
            if module is model:
                continue
            handles.append(module.register_forward_pre_hook(pre_hook, with_kwargs=True))
            handles.append(module.register_forward_hook(post_hook, with_kwargs=True))
        model.eval()
        try:
            with grad_ctx:
                output = model(*args)
        except TrainwellError:
            raise
        except Exception as exc:
            raise _failure_error(exc, rec, model, _input_shape_str(args, {})) from exc
    finally:
        for handle in handles:
            handle.remove()
        for module, mode in modes.items():
            module.training = mode

    params = _deduplicated_params(model)
    return ModelSummary(
        rows=rec.rows,
        total_params=sum(p.numel() for p in params),
        trainable_params=sum(p.numel() for p in params if p.requires_grad),
        input_shape=_example_shape(example),
        output_shape=_output_shape_str(output),
        param_bytes=sum(p.numel() * p.element_size() for p in params),
    )


# --------------------------------------------------------------------------- output


_SUMMARY_WORDS: dict[str, dict[str, str]] = {
    "en": {"title": "Model summary (input {shape})", "layer": "Layer", "type": "Type", "output": "Output shape",
           "params": "Params", "total": "Total params", "trainable": "Trainable params",
           "frozen": "Non-trainable params", "size": "Params size (MB)"},
    "zh": {"title": "模型概要（输入 {shape}）", "layer": "层", "type": "类型", "output": "输出形状", "params": "参数",
           "total": "参数总数", "trainable": "可训练参数", "frozen": "不可训练参数", "size": "参数大小（MB）"},
}


def render_summary(summary: ModelSummary, console: Console | None = None, lang: str = "en") -> None:
    """Print the summary as a rich table followed by parameter totals (``lang``: en or zh)."""
    console = console if console is not None else Console()
    words = _SUMMARY_WORDS.get(lang, _SUMMARY_WORDS["en"])
    shape = "(" + ", ".join(str(d) for d in summary.input_shape) + ")"
    table = Table(title=words["title"].format(shape=shape), title_justify="left")
    table.add_column(words["layer"], no_wrap=True)
    table.add_column(words["type"])
    table.add_column(words["output"])
    table.add_column(words["params"], justify="right")
    for row in summary.rows:
        table.add_row(
            escape("  " * row.depth + row.name),
            escape(row.type),
            escape(row.output_shape),
            f"{row.params:,}",
        )
    console.print(table)
    sep = "：" if lang == "zh" else ": "
    console.print(f"{words['output']}{sep}{escape(summary.output_shape)}", highlight=False)
    console.print(f"{words['total']}{sep}{summary.total_params:,}", highlight=False)
    console.print(f"{words['trainable']}{sep}{summary.trainable_params:,}", highlight=False)
    console.print(f"{words['frozen']}{sep}{summary.non_trainable_params:,}", highlight=False)
    console.print(f"{words['size']}{sep}{summary.param_mb:.2f}", highlight=False)


def summary_dict(summary: ModelSummary) -> dict[str, Any]:
    """JSON-ready dict: rows, totals (including non-trainable), shapes and sizes."""
    return {
        "rows": [
            {
                "name": r.name,
                "type": r.type,
                "output_shape": r.output_shape,
                "params": r.params,
                "trainable": r.trainable,
                "depth": r.depth,
            }
            for r in summary.rows
        ],
        "total_params": summary.total_params,
        "trainable_params": summary.trainable_params,
        "non_trainable_params": summary.non_trainable_params,
        "input_shape": list(summary.input_shape),
        "output_shape": summary.output_shape,
        "param_bytes": summary.param_bytes,
        "param_mb": round(summary.param_mb, 4),
    }
