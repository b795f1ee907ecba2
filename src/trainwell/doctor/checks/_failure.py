"""What failed, read from a traceback rather than from the message: the user's line, the operation that
raised (a torch function, a layer, a loss, an optimizer, or the call written on the user's line), and the
shape, dtype and device of every tensor that operation was given.

``failure_of(error)`` works for any exception; everything here runs once, after the script has failed.
"""

from __future__ import annotations

import ast
import linecache
import os
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import Any

import numpy as np
import torch
from torch import nn

from trainwell.doctor.checks._error_parsing import _TORCH_DIR, chain, describe, is_own_code, user_line
from trainwell.doctor.where import _is_user

_MAX_OPERANDS = 6
_PLUMBING = {"_call_impl", "_wrapped_call_impl", "__call__", "wrapper", "_fn", "fn", "decorate_context", "_use_grad",
             "inner", "forward_call", "_engine_run_backward", "handle_torch_function", "_make_grads"}
_BINOPS = {ast.MatMult: "@", ast.Mult: "*", ast.Add: "+", ast.Sub: "-", ast.Div: "/", ast.Pow: "**",
           ast.FloorDiv: "//", ast.Mod: "%"}


@dataclass
class Operand:
    """One tensor the failing operation was given."""

    name: str
    shape: tuple[int, ...]
    dtype: str  # "float32", "int64"
    device: str  # "cpu", "cuda:0"; "numpy" for a NumPy array
    requires_grad: bool = False
    leaf: bool = True  # False: computed from other tensors (it has a grad_fn)
    inference: bool = False  # made under torch.inference_mode()
    strides: tuple[int, ...] = ()  # a NumPy array's strides, in bytes

    def words(self) -> str:
        """``x (32, 10) float32 cpu``."""
        return f"`{self.name}` {fmt_shape(self.shape)} {self.dtype} {self.device}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype, "device": self.device}


@dataclass
class Value:
    """One argument of the failing operation that is not a tensor (a list, a tuple, a number, a string...)."""

    name: str
    value: Any  # held only until the end of the run, to describe it

    @property
    def kind(self) -> str:
        """``tuple``, ``list``, ``int``, ``generator``, ``Linear``..."""
        return type(self.value).__name__

    def items(self) -> list[Any]:
        return list(self.value) if isinstance(self.value, (list, tuple)) else []


@dataclass
class Failure:
    """The facts of one crash."""

    error_type: str
    message: str  # the first line of the innermost message of the chain
    where: str | None  # "train.py:12": the user's innermost line
    line: str  # that line's source, stripped
    op: str | None  # "torch.dot", "nn.Linear(in_features=4, out_features=2)", "F.cross_entropy", "@"
    operands: list[Operand] = field(default_factory=list)
    module: nn.Module | None = None  # the layer whose forward failed, if any
    values: list[Value] = field(default_factory=list)  # its arguments that are not tensors
    owner: Any = None  # the object whose method failed (an optimizer, a module being built), if any

    def operand(self, *names: str) -> Operand | None:
        """The first operand whose name is one of ``names`` (or ends with ``.name``)."""
        return next((o for o in self.operands if o.name in names or o.name.rsplit(".", 1)[-1] in names), None)

    def value(self, *names: str) -> Any:
        """The first non-tensor argument named one of ``names``, else ``None``."""
        return next((v.value for v in self.values if v.name in names), None)

    def evidence(self) -> dict[str, Any]:
        return {"error": self.message, "error_type": self.error_type, "operation": self.op,
                "operands": [o.to_dict() for o in self.operands]}


def short_name(op: str | None) -> str:
    """The last part of an operation's name: ``torch.dot`` -> ``dot``, ``x.view`` -> ``view``."""
    return (op or "").split("(")[0].rsplit(".", 1)[-1]


def fmt_shape(shape: tuple[int, ...]) -> str:
    return str(tuple(int(v) for v in shape)) if shape else "() (a scalar)"


def tensor_operand(name: str, value: Any) -> Operand | None:
    """An ``Operand`` for a plain tensor (sparse, nested or fake ones give what they can) or a NumPy array
    (anything else None)."""
    if isinstance(value, np.ndarray):
        return Operand(name, tuple(int(v) for v in value.shape), str(value.dtype), "numpy",
                       strides=tuple(int(v) for v in value.strides))
    if not isinstance(value, torch.Tensor):
        return None
    try:
        shape = tuple(int(v) for v in value.shape)
    except (RuntimeError, TypeError, ValueError):  # nested tensors have no single shape
        shape = ()
    try:
        inference = bool(value.is_inference())
    except (RuntimeError, AttributeError):
        inference = False
    return Operand(name, shape, str(value.dtype).replace("torch.", ""), str(value.device),
                   bool(value.requires_grad), leaf=value.grad_fn is None, inference=inference)


def _split(pairs: list[tuple[str, Any]]) -> tuple[list[Operand], list[Value]]:
    """(name, value) arguments as operands (tensors, and the tensors inside lists and tuples) and values (the rest,
    lists and tuples included, so that a rule can see what they held)."""
    operands: list[Operand] = []
    values: list[Value] = []
    for name, v in pairs:
        o = tensor_operand(name, v)
        if o is not None:
            operands.append(o)
            continue
        if v is None or isinstance(v, type):
            continue
        values.append(Value(name, v))
        if isinstance(v, (list, tuple)):
            for i, item in enumerate(v[:_MAX_OPERANDS]):
                o = tensor_operand(f"{name}[{i}]", item)
                if o is not None:
                    operands.append(o)
    return operands[:_MAX_OPERANDS], values[:_MAX_OPERANDS * 2]


def _frames(error: BaseException) -> list[tuple[FrameType, int, int]]:
    """(frame, line, lasti) of the traceback, outermost first."""
    out: list[tuple[FrameType, int, int]] = []
    tb: TracebackType | None = error.__traceback__
    while tb is not None:
        out.append((tb.tb_frame, tb.tb_lineno, tb.tb_lasti))
        tb = tb.tb_next
    return out


def _is_torch(frame: FrameType) -> bool:
    return frame.f_code.co_filename.startswith(_TORCH_DIR)


def failure_of(error: BaseException) -> Failure:
    """The facts of ``error``: the innermost error of its chain that has a traceback into the user's code."""
    inner = error
    for e in chain(error):
        if e.__traceback__ is not None and any(_is_user(f.f_code.co_filename) for f, _, _ in _frames(e)):
            inner = e
    frames = _frames(inner)
    text = str(inner.args[0]) if isinstance(inner, KeyError) and inner.args else str(inner)
    first = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), type(inner).__name__)[:300]
    # The same frame as ``user_line``: the user's own code, else (a script inside an installed package) any
    # code that is not torch's, trainwell's or Python's.
    users = [fr for fr in frames if is_own_code(fr[0].f_code.co_filename)] or \
        [fr for fr in frames if _is_user(fr[0].f_code.co_filename)]
    user = users[-1] if users else None
    line = linecache.getline(user[0].f_code.co_filename, user[1]).strip() if user else ""
    after = frames[frames.index(user) + 1:] if user else frames
    torch_frames = [f for f, _, _ in after if _is_torch(f)]
    failure = Failure(type(inner).__name__, first, user_line(inner), line, None)
    module = _failing_module(torch_frames)
    if module is not None:
        failure.module = module
        failure.op = module_words(module)
        failure.operands = _module_operands(torch_frames, module)
        failure.values = _split(_frame_args(_module_frame(torch_frames, module)))[1]
    elif torch_frames:
        frame = _innermost_torch_function(torch_frames)
        failure.op = _torch_name(frame) if frame is not None else None
        failure.operands, failure.values = _split(_frame_args(frame)) if frame is not None else ([], [])
        me = frame.f_locals.get("self") if frame is not None else None
        failure.owner = me if me is not None and not isinstance(me, torch.Tensor) else None
    if user is not None and (not failure.operands or failure.op is None):
        op, operands, values = _written_call(*user)
        failure.op = failure.op or op
        failure.operands = failure.operands or operands
        failure.values = failure.values or values
    return failure


def _module_frame(torch_frames: list[FrameType], module: nn.Module) -> FrameType:
    return next(f for f in torch_frames if f.f_code.co_name == "forward" and f.f_locals.get("self") is module)


def module_words(module: nn.Module) -> str:
    return f"nn.{describe(module)}" if type(module).__module__.startswith("torch.nn") else describe(module)


def _failing_module(torch_frames: list[FrameType]) -> nn.Module | None:
    """The innermost torch layer whose ``forward`` is in the traceback."""
    for f in reversed(torch_frames):
        me = f.f_locals.get("self")
        if f.f_code.co_name == "forward" and isinstance(me, nn.Module):
            return me
    return None


def _module_operands(torch_frames: list[FrameType], module: nn.Module) -> list[Operand]:
    """The layer's inputs (from its ``forward`` frame, then the functions it called) and its parameters."""
    found: list[Operand] = []
    start = next(i for i, f in enumerate(torch_frames)
                 if f.f_code.co_name == "forward" and f.f_locals.get("self") is module)
    for f in torch_frames[start:]:
        if f.f_code.co_name in _PLUMBING:
            continue
        for o in _frame_operands(f):
            if not any(o.name == s.name for s in found):
                found.append(o)
    for name, p in module.named_parameters(recurse=False):
        o = tensor_operand(f"{name}", p)
        if o is not None and not any(s.name == name for s in found):
            found.append(o)
    return found[:_MAX_OPERANDS]


def _innermost_torch_function(torch_frames: list[FrameType]) -> FrameType | None:
    """The innermost torch frame that is an operation (not dispatch plumbing), preferring one given tensors."""
    useful = [f for f in torch_frames if f.f_code.co_name not in _PLUMBING and not f.f_code.co_name.startswith("<")]
    with_tensors = [f for f in useful if _frame_operands(f)]
    pick = with_tensors or useful
    return pick[0] if pick and _is_public(pick[0]) else (pick[-1] if pick else None)


def _is_public(frame: FrameType) -> bool:
    return not frame.f_code.co_name.startswith("_")


def _torch_name(frame: FrameType) -> str:
    """``F.cross_entropy``, ``Adam.step``, ``Tensor.backward``, ``torch.autograd.backward``."""
    name = frame.f_code.co_name
    me = frame.f_locals.get("self")
    if me is not None and not isinstance(me, torch.Tensor):
        return f"{type(me).__name__}.{name}"
    if isinstance(me, torch.Tensor):
        return f"Tensor.{name}"
    rel = os.path.relpath(frame.f_code.co_filename, os.path.dirname(_TORCH_DIR.rstrip(os.sep)))
    mod = rel[:-3].replace(os.sep, ".") if rel.endswith(".py") else rel
    mod = mod.removesuffix(".__init__")
    if mod == "torch.nn.functional":
        return f"F.{name.lstrip('_')}"  # F.max_pool2d runs F._max_pool2d
    return f"{mod}.{name}"


def _frame_args(frame: FrameType | None) -> list[tuple[str, Any]]:
    """(name, value) of the arguments a function was given (``self`` left out)."""
    if frame is None:
        return []
    code = frame.f_code
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04)]
    return [(n, frame.f_locals.get(n)) for n in names if n != "self"]


def _frame_operands(frame: FrameType | None) -> list[Operand]:
    """The tensors a torch function was given: its arguments first, then lists of tensors among them."""
    return _split(_frame_args(frame))[0]


def _written_call(frame: FrameType, lineno: int, lasti: int) -> tuple[str | None, list[Operand], list[Value]]:
    """The call (or operator) the user's line was running when it raised, the tensors it named, and its other
    arguments (names, literals)."""
    node = _failing_node(frame, lasti)
    if node is None:
        return None, [], []
    if isinstance(node, (ast.Subscript, ast.Attribute)):  # the target of ``x[...] = v`` / ``x.a = v``?
        node = _assignment_to(node, frame, lineno) or node
    op: str | None = None
    parts: list[ast.AST] = []
    named: list[tuple[str, ast.AST]] = []
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            op = f"assignment to {ast.unparse(target)}"
            parts = [target.value, target, node.value]
        elif isinstance(target, ast.Attribute):
            op = f"setting .{target.attr}"
            parts = [target.value, node.value]
    elif isinstance(node, ast.Attribute):  # the target of an assignment: obj.attr = ...
        op = f"setting .{node.attr}"
        parts = [node.value]
    elif isinstance(node, ast.Call):
        op = _dotted(node.func)
        parts = list(node.args)
        named = [(k.arg or "**", k.value) for k in node.keywords]
        if isinstance(node.func, ast.Attribute):
            parts.insert(0, node.func.value)  # x.view(...): x is an operand
    elif isinstance(node, ast.BinOp):
        op = _BINOPS.get(type(node.op), type(node.op).__name__)
        parts = [node.left, node.right]
    elif isinstance(node, ast.Subscript):
        op = "indexing []"
        parts = [node.value, node.slice]
    elif isinstance(node, ast.AugAssign):
        op = _BINOPS.get(type(node.op), type(node.op).__name__) + "="
        parts = [node.target, node.value]
    pairs: list[tuple[str, Any]] = []
    literals: list[Value] = []  # a list or tuple written out on the line: its elements go by their own names
    for p in parts:
        if isinstance(p, (ast.List, ast.Tuple)):
            pairs += [(ast.unparse(e), _value_of(e, frame)) for e in p.elts]
            literals.append(Value(ast.unparse(p), _value_of(p, frame)))
        else:
            pairs.append((ast.unparse(p), _value_of(p, frame)))
    operands, values = _split(pairs + [(k, _value_of(v, frame)) for k, v in named])
    return op, operands, literals + values


def _assignment_to(target: ast.AST, frame: FrameType, lineno: int) -> ast.Assign | None:
    """The assignment statement on line ``lineno`` whose (single) target is ``target``, if it is one."""
    try:
        stmt = ast.parse(linecache.getline(frame.f_code.co_filename, lineno).strip()).body[0]
    except (SyntaxError, IndexError):
        return None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and ast.unparse(stmt.targets[0]) == ast.unparse(target):
        return stmt
    return None


def _failing_node(frame: FrameType, lasti: int) -> ast.AST | None:
    """The smallest call / operator / subscript on the user's line that covers the failing instruction."""
    try:
        positions = list(frame.f_code.co_positions())
        start_line, end_line, start_col, end_col = positions[lasti // 2]
    except (IndexError, ValueError, AttributeError):
        return None
    if start_line is None or end_line is None or start_col is None or end_col is None:
        return None
    lines = [linecache.getline(frame.f_code.co_filename, n) for n in range(start_line, end_line + 1)]
    if not lines or not lines[0]:
        return None
    if len(lines) == 1:
        text = lines[0][start_col:end_col]
    else:
        text = lines[0][start_col:] + "".join(lines[1:-1]) + lines[-1][:end_col]
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        try:
            tree = ast.parse(text.strip()).body[0]
        except (SyntaxError, IndexError):
            return None
    return tree


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - an odd node: no name
        return type(node).__name__


def _value_of(node: ast.AST, frame: FrameType) -> Any:
    """The value of a simple expression (names, attributes, subscripts, ``.T``, calls of nothing) in ``frame``,
    without calling anything the user wrote: only names and attribute reads of tensors/modules are followed."""
    if isinstance(node, ast.Name):
        return frame.f_locals.get(node.id, frame.f_globals.get(node.id))
    if isinstance(node, ast.Attribute):
        base = _value_of(node.value, frame)
        if base is None:
            return None
        if isinstance(base, torch.Tensor):
            return base.T if node.attr in ("T", "mT") and base.ndim == 2 else None
        # Looked up in the stores only (a module's parameters, buffers and submodules, an object's __dict__):
        # getattr could run a property the user wrote.
        stores = [getattr(base, "__dict__", {})]
        if isinstance(base, nn.Module):
            stores[:0] = [base._parameters, base._buffers, base._modules]
        return next((store[node.attr] for store in stores if node.attr in store), None)
    if isinstance(node, (ast.Constant, ast.List, ast.Tuple)):
        if isinstance(node, ast.Constant):
            return node.value
        items = [_value_of(e, frame) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Subscript):
        base = _value_of(node.value, frame)
        if isinstance(base, (list, tuple)) and isinstance(node.slice, ast.Constant) and \
                isinstance(node.slice.value, int) and -len(base) <= node.slice.value < len(base):
            return base[node.slice.value]
        if isinstance(base, (list, tuple)) and isinstance(node.slice, ast.Slice):
            bounds = _slice_bounds(node.slice, frame)
            if bounds is None or not all(b is None or isinstance(b, int) for b in bounds):
                return None  # (a bound not read, or a tensor: not a list's slice to guess at)
            return base[slice(*bounds)]
        if isinstance(base, torch.Tensor):
            try:
                index = _index_value(node.slice, frame)
                return base[index] if index is not None else None
            except Exception:  # noqa: BLE001 - the indexing itself may be what failed
                return None
    return None


def _slice_bounds(node: ast.Slice, frame: FrameType) -> list[Any] | None:
    """A slice's (lower, upper, step), each None where it is left out; None when a bound is written but cannot be
    read (``x[:n - 1]``), so that ``x[:]`` is never taken for it."""
    bounds = []
    for b in (node.lower, node.upper, node.step):
        value = _index_value(b, frame) if b is not None else None
        if b is not None and value is None:
            return None
        bounds.append(value)
    return bounds


def _index_value(node: ast.AST, frame: FrameType) -> Any:
    """An index made of ints, slices, ``...``, ``None`` and tensors (or tuples of them), else ``None``."""
    if isinstance(node, ast.Constant) and (isinstance(node.value, int) or node.value is Ellipsis):
        return node.value
    if isinstance(node, ast.Name):
        v = frame.f_locals.get(node.id, frame.f_globals.get(node.id))
        ok = (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, torch.Tensor) or \
            (isinstance(v, tuple) and all(isinstance(i, (int, torch.Tensor, slice)) for i in v))
        return v if ok else None
    if isinstance(node, ast.Slice):
        bounds = _slice_bounds(node, frame)
        return slice(*bounds) if bounds is not None else None
    if isinstance(node, ast.Tuple):
        items = [_index_value(e, frame) for e in node.elts]
        return tuple(items) if all(i is not None for i in items) else None
    return None
