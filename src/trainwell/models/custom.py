"""``--model package.module:Class`` — a user's own ``nn.Module``."""

from __future__ import annotations

import inspect
from typing import Any

from torch import nn

from trainwell._errors import TrainwellError
from trainwell._imports import import_module_of


def load_user_model(spec: str, input_shape: tuple[int, ...], num_classes: int, kwargs: dict[str, Any]) -> nn.Module:
    """Import ``module:Class`` (the current folder is importable) and build it.

    Arguments named ``input_shape`` or ``num_classes`` in its constructor are filled in;
    ``model.kwargs`` supplies the rest.
    """
    module, attr = import_module_of(spec, "--model", "mymodels:Net", "package.module:Class")
    module_name = module.__name__
    cls = getattr(module, attr, None)
    if cls is None:
        names = [n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, nn.Module)]
        raise TrainwellError(f"{module_name!r} has no {attr!r}. nn.Module classes there: {', '.join(names) or 'none'}.")
    params = inspect.signature(cls).parameters
    args = dict(kwargs)
    if "input_shape" in params:
        args.setdefault("input_shape", tuple(input_shape))
    if "num_classes" in params:
        args.setdefault("num_classes", num_classes)
    try:
        model = cls(**args)
    except TypeError as e:
        raise TrainwellError(f"Cannot build {spec}: {e}.",
                             fix="pass constructor arguments with --set model.kwargs.NAME=VALUE") from None
    if not isinstance(model, nn.Module):
        raise TrainwellError(f"{spec} built a {type(model).__name__}, not a torch.nn.Module.")
    return model
