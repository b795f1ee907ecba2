"""The classification head of a model: its last ``nn.Linear`` (the built-in cnn's and mlp's last layer,
torchvision's ``fc``, most models of one's own), which fine-tuning replaces for new classes."""

from __future__ import annotations

import torch
from torch import nn

from trainwell._errors import TrainwellError


def head_of(model: nn.Module) -> tuple[str, nn.Linear]:
    """The classification head: the model's last ``nn.Linear`` in module order, and its name."""
    found = [(name, m) for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    if not found:
        raise TrainwellError(f"{type(model).__name__} has no nn.Linear layer to serve as the classification head "
                             "that fine-tuning replaces.",
                             fix="end the model with an nn.Linear to the classes, or train it without --pretrained")
    return found[-1]


def head_module(model: nn.Module) -> nn.Module:
    """What fine-tuning trains at the head's rate: the model's own ``classification_head()`` when it has one (a
    Hugging Face classifier: the layers after its base model), else the last ``nn.Linear``."""
    own = getattr(model, "classification_head", None)
    return own() if callable(own) else head_of(model)[1]


def replace_head(model: nn.Module, num_classes: int, *, at_zero: bool = True) -> tuple[str, int]:
    """Put a new ``nn.Linear`` for ``num_classes`` where the model's last one is, starting at zero (``at_zero``;
    else PyTorch's random initialization, as an embedding layer needs); its name and the old number of outputs."""
    name, head = head_of(model)
    new = nn.Linear(head.in_features, num_classes, bias=head.bias is not None)
    if at_zero:
        start_at_zero(new)
    parent = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
    setattr(parent, name.rpartition(".")[2], new)
    return name, head.out_features


def start_at_zero(head: nn.Linear) -> nn.Linear:
    """A new head's weights and bias at zero: every class starts at the same score, so its first gradients are the
    data's, not a random head's noise pushed back into pretrained features."""
    with torch.no_grad():
        for value in head.parameters():
            value.zero_()
    return head
