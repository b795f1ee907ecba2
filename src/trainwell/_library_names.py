"""The libraries whose models trainwell builds by name (``torchvision:NAME``, ``timm:NAME`` for images,
``hf:NAME_OR_PATH`` for texts), written once for config.py, the model registry and the rule on which names a file
may hold (no torch: config reads it)."""

from __future__ import annotations

from typing import Any

LIBRARIES = ("torchvision", "timm", "hf")


def is_library_model(name: Any) -> bool:
    """A library's registry entry (``torchvision:resnet18``), not an import path of the user's code."""
    return isinstance(name, str) and name.partition(":")[0] in LIBRARIES and bool(name.partition(":")[2])


def is_hf_model(name: Any) -> bool:
    """A Hugging Face text classifier by hub name or ``save_pretrained`` folder (``hf:bert-base-chinese``): its
    configuration and tokenizer are read as data, never as code (``trust_remote_code`` stays False)."""
    return is_library_model(name) and name.startswith("hf:")
