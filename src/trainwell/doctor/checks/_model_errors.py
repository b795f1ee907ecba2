"""Explainers for a model class written wrongly: an optimizer with nothing to train, a missing forward."""

from __future__ import annotations

import difflib
import inspect
from types import CodeType
from typing import Any

import torch
from torch import nn

from trainwell.doctor.checks._error_base import ErrorCheck, Explainer, Explanation
from trainwell.doctor.checks._error_parsing import Context, Parsed
from trainwell.doctor.where import _is_user


def _user_classes(module: nn.Module) -> list[type]:
    """The module's own classes (its class and the user's base classes), not PyTorch's."""
    return [c for c in type(module).__mro__
            if issubclass(c, nn.Module) and not c.__module__.startswith("torch.") and c is not nn.Module]


def _misspelt(cls: type, name: str) -> str | None:
    """A method of ``cls`` whose name is close to ``name`` while ``name`` itself is not defined there."""
    if name in cls.__dict__:
        return None
    methods = [n for n, v in cls.__dict__.items() if inspect.isfunction(v)]
    close = difflib.get_close_matches(name, methods, n=1, cutoff=0.7)
    if not close and name.strip("_") in [n.strip("_").lower() for n in methods]:
        close = [next(n for n in methods if n.strip("_").lower() == name.strip("_"))]
    return close[0] if close else None


def _nested(cls: type, name: str) -> str | None:
    """A method defined inside another method of ``cls`` (an indentation slip): the outer method's name."""
    for outer, v in cls.__dict__.items():
        code = getattr(v, "__code__", None)
        if isinstance(code, CodeType) and any(isinstance(c, CodeType) and c.co_name == name for c in code.co_consts):
            return outer
    return None


def _hidden_layers(module: nn.Module) -> list[tuple[str, str]]:
    """Attributes that hold layers or weights PyTorch cannot see: (attribute, what it holds)."""
    found = []
    for attr, v in vars(module).items():
        if attr.startswith("_"):
            continue
        items = list(v.values()) if isinstance(v, dict) else list(v) if isinstance(v, (list, tuple)) else None
        if items and any(isinstance(i, nn.Module) for i in items):
            found.append((attr, "dict of layers" if isinstance(v, dict) else "list of layers"))
        elif items and any(isinstance(i, torch.Tensor) and i.requires_grad for i in items):
            found.append((attr, "list of tensors"))
        elif isinstance(v, torch.Tensor) and v.requires_grad:
            found.append((attr, "tensor"))
    return found


def _candidates(ctx: Context) -> list[nn.Module]:
    """Models without parameters that the user's code at the failing line can see (its locals, then globals)."""
    for f in reversed(ctx.frames):
        if not _is_user(f.f_code.co_filename):
            continue
        seen: list[nn.Module] = []
        for scope in (f.f_locals, f.f_globals):
            for v in list(scope.values()):
                if isinstance(v, nn.Module) and _user_classes(v) and next(v.parameters(), None) is None \
                        and not any(v is s for s in seen):
                    seen.append(v)
        return seen
    return []


_CONTAINER_FIX = {"list of layers": "nn.ModuleList([...])", "dict of layers": "nn.ModuleDict({...})",
                  "list of tensors": "nn.ParameterList([...])", "tensor": "nn.Parameter(torch.randn(...))"}


def _init_typo(name: str, wrong: str, effect: tuple[str, str]) -> Explanation:
    return Explanation(
        (f"`{name}` has no layers: its constructor is spelt `{wrong}` instead of `__init__`, so Python never runs "
         f"it and no layer is created; {effect[0]}.",
         f"`{name}` 没有任何层：它的构造函数写成了 `{wrong}` 而不是 `__init__`，Python 根本不会调用它，"
         f"所以没有创建任何层，{effect[1]}。"),
        (f"rename it: def __init__(self, ...):  # two underscores on each side; then call super().__init__() first",
         f"改名为：def __init__(self, ...):  # 两边各两个下划线；并且先调用 super().__init__()"),
        {"model": name, "misspelt": wrong})


def _class_named(ctx: Context, name: str) -> type | None:
    """The user's nn.Module class called ``name``, found in the frames of the traceback."""
    for f in reversed(ctx.frames):
        if not _is_user(f.f_code.co_filename):
            continue
        for v in (*f.f_locals.values(), *f.f_globals.values()):
            cls = v if isinstance(v, type) else type(v)
            if issubclass(cls, nn.Module) and cls.__name__ == name:
                return cls
    return None


def _misspelt_init(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation | None:
    """``Net(3, 2)`` refused, or ``self.fc`` missing in forward(): a constructor that never ran."""
    cls = _class_named(ctx, p.groups[0])
    if cls is None:
        return None
    for c in (k for k in cls.__mro__ if issubclass(k, nn.Module) and not k.__module__.startswith("torch.")):
        wrong = _misspelt(c, "__init__")
        if wrong:
            effect = ((f"nn.Module's own constructor ran instead, which takes no arguments",
                       f"实际运行的是 nn.Module 自己的构造函数，它不接受参数") if p.kind == "init_args" else
                      (f"forward() then looks for `self.{p.groups[1]}`, which was never set",
                       f"forward() 随后去找 `self.{p.groups[1]}`，而它从来没有被设置"))
            return _init_typo(cls.__name__, wrong, effect)
    return None


def _empty_params(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    for model in _candidates(ctx):
        name = type(model).__name__
        for cls in _user_classes(model):
            wrong = _misspelt(cls, "__init__")
            if wrong:
                return _init_typo(name, wrong, ("the optimizer gets an empty list", "优化器收到的是空列表"))
        hidden = _hidden_layers(model)
        if hidden:
            attr, what = hidden[0]
            fix = _CONTAINER_FIX[what]
            return Explanation(
                (f"`{name}` has no parameters that PyTorch can see: `self.{attr}` is a plain Python {what}, and "
                 f"model.parameters() only finds layers and weights assigned directly or kept in PyTorch's own "
                 f"containers; the optimizer gets an empty list (and model.to(device) / state_dict() miss them too).",
                 f"`{name}` 没有 PyTorch 能看到的参数：`self.{attr}` 是普通的 Python {_ZH[what]}，而 model.parameters() "
                 f"只能找到直接赋值的层和权重，或放在 PyTorch 自己的容器里的；所以优化器收到空列表"
                 f"（model.to(device) 和 state_dict() 也会漏掉它们）。"),
                (f"keep them in a PyTorch container: self.{attr} = {fix}",
                 f"放进 PyTorch 的容器：self.{attr} = {fix}"),
                {"model": name, "attribute": attr, "holds": what})
    return Explanation(
        ("The optimizer was given no parameters at all. Usual causes: the model's layers are never created (a "
         "misspelt __init__, layers kept in a plain list), every parameter was filtered out as frozen, or "
         "model.parameters() was used up before (it is a generator: it can be read once).",
         "优化器没有收到任何参数。常见原因：模型的层根本没有被创建（__init__ 拼错、层放在普通 list 里），"
         "所有参数都因冻结被过滤掉了，或者 model.parameters() 之前已经被读过一次（它是生成器，只能读一次）。"),
        ("check what it gets: print(sum(p.numel() for p in model.parameters()))  # then "
         "torch.optim.Adam(model.parameters(), lr=1e-3) right after building the model",
         "先看它收到了什么：print(sum(p.numel() for p in model.parameters()))  # 然后在建好模型后立即"
         "torch.optim.Adam(model.parameters(), lr=1e-3)"))


_ZH = {"list of layers": "列表（里面是层）", "dict of layers": "字典（里面是层）", "list of tensors": "列表（里面是张量）",
       "tensor": "张量"}
_ZH_SHORT = {"list of layers": "列表", "dict of layers": "字典", "list of tensors": "列表"}  # in a sentence that names them


def _missing_forward(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    module: Any = next((f.f_locals.get("self") for f in reversed(ctx.frames)
                        if f.f_code.co_name == "_forward_unimplemented"), None)
    name = p.groups[0] if p.groups else type(module).__name__
    if isinstance(module, nn.Module):
        for cls in _user_classes(module):
            wrong = _misspelt(cls, "forward")
            if wrong:
                return Explanation(
                    (f"`{name}` defines `{wrong}` but not `forward`: calling model(x) runs the method named exactly "
                     f"`forward`, so PyTorch finds none.",
                     f"`{name}` 定义了 `{wrong}`，却没有 `forward`：调用 model(x) 时执行的是名字恰好为 `forward` 的方法，"
                     f"所以 PyTorch 找不到。"),
                    (f"rename it: def forward(self, x):  # was {wrong}", f"改名为：def forward(self, x):  # 原来是 {wrong}"),
                    {"model": name, "misspelt": wrong})
            outer = _nested(cls, "forward")
            if outer:
                return Explanation(
                    (f"`{name}` has its `forward` indented inside `{outer}`, so it is a local function of "
                     f"`{outer}`, not a method of the class.",
                     f"`{name}` 的 `forward` 缩进到了 `{outer}` 里面，成了 `{outer}` 的局部函数，而不是类的方法。"),
                    ("move `def forward(self, x):` out one level, to the same indentation as `def __init__`",
                     "把 `def forward(self, x):` 往外移一级缩进，与 `def __init__` 对齐"),
                    {"model": name, "inside": outer})
    return Explanation(
        (f"`{name}` has no `forward` method: calling model(x) runs `forward`, which every nn.Module subclass "
         f"must define.", f"`{name}` 没有 `forward` 方法：调用 model(x) 时会执行 `forward`，每个 nn.Module 子类都必须定义它。"),
        ("define it in the class, next to __init__: def forward(self, x): return self.net(x)",
         "在类里、与 __init__ 并列定义：def forward(self, x): return self.net(x)"), {"model": name})


def unregistered_first(explain: Explainer) -> Explainer:
    """``explain``, unless the layer that failed is one its model runs but does not register (kept in a plain list
    or dict): then model.to(device) / .to(dtype) skipped it, and that is the explanation."""

    def explainer(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation | None:
        root, layer = (ctx.modules[0], ctx.failing) if ctx.modules else (None, None)
        if root is None or layer is None or layer is root or any(m is layer for m in root.modules()):
            return explain(p, ctx, chk)
        holder = next(((a, w) for a, w in _hidden_layers(root) if w in ("list of layers", "dict of layers")), None)
        if holder is None:
            return explain(p, ctx, chk)
        attr, what = holder
        name = type(root).__name__
        return Explanation(
            (f"This layer runs inside `{name}` but is kept in a plain Python {what.removesuffix(' of layers')} "
             f"(`self.{attr}`), which PyTorch does not look into: model.to(device) / .to(dtype) / .cuda() moved the "
             f"rest of the model and left this layer where it was built, so its weights and its input differ. "
             f"model.parameters() misses it as well, so the optimizer would never train it.",
             f"这一层在 `{name}` 里被调用，却放在普通的 Python {_ZH[what]}（`self.{attr}`）里，PyTorch 不会去里面找："
             f"model.to(device) / .to(dtype) / .cuda() 移动了模型的其余部分，这一层却留在了创建时的位置，"
             f"所以它的权重和输入不一致。model.parameters() 也漏掉了它，优化器永远不会训练它。"),
            (f"keep the layers in a PyTorch container: self.{attr} = {_CONTAINER_FIX[what]}",
             f"把这些层放进 PyTorch 的容器：self.{attr} = {_CONTAINER_FIX[what]}"),
            {"model": name, "attribute": attr, "holds": what})

    return explainer
