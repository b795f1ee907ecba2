"""Layers a model runs in forward() but keeps in a plain Python list or dict, where PyTorch does not look.

When every layer is kept so, building the optimizer fails ("empty parameter list", explained by
``_model_errors``). When only some are, nothing fails: those layers never train, and ``model.to(device)``
and ``state_dict()`` skip them. ``model-definition`` reports that form from the model calls of sampled steps.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from trainwell.doctor.checks._error_base import Explanation
from trainwell.doctor.checks._model_errors import _CONTAINER_FIX, _ZH_SHORT, _hidden_layers
from trainwell.doctor.events import ForwardEvent


class UnregisteredLayers:
    """Watches a trained model's calls; says so once STREAK sampled calls in a row ran hidden layers that got
    gradients (a teacher kept in a list and called under no_grad gets none: not training it is meant)."""

    STREAK = 3

    def __init__(self) -> None:
        self.streak = 0

    def look(self, session: Any, ev: ForwardEvent) -> Explanation | None:
        if not ev.grad_enabled or not ev.leaf_calls or not session.is_trained(ev.module):
            return None
        registered = set(ev.module.modules())
        trained = session.trained_params()
        hidden = {id(m): m for m, _, _ in ev.leaf_calls if m not in registered
                  and any(p.requires_grad and id(p) not in trained for p in m.parameters(recurse=False))}
        if not hidden:
            self.streak = 0
            return None
        self.streak += 1
        if self.streak < self.STREAK or not any(p.grad is not None for m in hidden.values()
                                                for p in m.parameters(recurse=False)):
            return None
        return _explain(ev.module, list(hidden.values()))


def _explain(model: nn.Module, hidden: list[nn.Module]) -> Explanation:
    cls = type(model).__name__
    holder = next(((attr, what) for attr, what in _hidden_layers(model) if what != "tensor"), None)
    attr, what = holder if holder else ("layers", "list of layers")
    names = [f"{_slot(model, attr, m)}.{n}" for m in hidden for n, _ in m.named_parameters(recurse=False)]
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    container = _CONTAINER_FIX[what]
    explain = (f"backward() writes gradients into {len(names)} parameter tensors ({shown}) of {len(hidden)} layer(s) "
               f"that `{cls}` runs in forward() but keeps in a plain Python {what.removesuffix(' of layers')} "
               f"(`self.{attr}`), which PyTorch does not look into: model.parameters() leaves them out, so the "
               f"optimizer never got them and they keep their initial values; model.to(device) and state_dict() "
               f"skip them too (on a GPU this shows as a device-mismatch error).",
               f"backward() 把梯度写进了 {len(names)} 个参数张量（{shown}），它们属于 {len(hidden)} 个层：`{cls}` 在 "
               f"forward() 里用到了这些层，却把它们放在普通的 Python {_ZH_SHORT[what]}（`self.{attr}`）里，"
               f"PyTorch 不会去里面找：model.parameters() 漏掉了它们，所以优化器从来没有拿到它们，它们一直保持初始值；"
               f"model.to(device) 和 state_dict() 也会跳过它们（在 GPU 上表现为设备不一致的错误）。")
    fix = (f"keep the layers in a PyTorch container: self.{attr} = {container}  # then build the optimizer from "
           f"model.parameters()", f"把这些层放进 PyTorch 的容器：self.{attr} = {container}  # 然后用 "
           f"model.parameters() 创建优化器")
    place = (f"'s layers in `self.{attr}`", f"中 `self.{attr}` 里的层")
    evidence = {"parameters": names[:20], "count": len(names), "unregistered_layers": len(hidden), "attribute": attr}
    return Explanation(explain, fix, evidence, place)


def _slot(model: nn.Module, attr: str, layer: nn.Module) -> str:
    """Where a layer sits in the plain container ``model.<attr>``: ``blocks[1]``, ``heads['a']``, or its class."""
    held = getattr(model, attr, None)
    items = held.items() if isinstance(held, dict) else enumerate(held) if isinstance(held, (list, tuple)) else ()
    return next((f"{attr}[{k!r}]" for k, v in items if v is layer), type(layer).__name__)
