"""``--model package.module:Class`` — a user's own ``nn.Module``."""

from __future__ import annotations

import inspect
from typing import Any

from torch import nn

from trainwell._errors import TrainwellError
from trainwell._imports import import_module_of


def load_user_model(spec: str, input_shape: tuple[int, ...], num_classes: int, kwargs: dict[str, Any],
                    known: dict[str, Any] | None = None) -> nn.Module:
    """Import ``module:Class`` (the current folder is importable) and build it.

    Arguments named ``input_shape`` or ``num_classes`` in its constructor are filled in, and so
    is any other name in ``known`` (text: ``vocab_size``); ``model.kwargs`` supplies the rest.
    """
    module, attr = import_module_of(spec, "--model", "mymodels:Net", "package.module:Class")
    module_name = module.__name__
    cls = getattr(module, attr, None)
    if cls is None:
        names = [n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, nn.Module)]
        raise TrainwellError(f"{module_name!r} has no {attr!r}. nn.Module classes there: {', '.join(names) or 'none'}.")
    params = inspect.signature(cls).parameters
    args = dict(kwargs)
    fillable = {"input_shape": tuple(input_shape), "num_classes": num_classes, **(known or {})}
    for name, value in fillable.items():
        if name in params:
            args.setdefault(name, value)
    try:
        model = cls(**args)
    except TypeError as e:
        raise TrainwellError(f"Cannot build {spec}: {e}.",
                             fix="pass constructor arguments with --set model.kwargs.NAME=VALUE") from None
    if not isinstance(model, nn.Module):
        raise TrainwellError(f"{spec} built a {type(model).__name__}, not a torch.nn.Module.")
    return model
