"""The image libraries whose models trainwell builds by name (``torchvision:NAME``, ``timm:NAME``), written once
for config.py, the model registry and the rule on which names a file may hold (no torch: config reads it)."""

from __future__ import annotations

from typing import Any

LIBRARIES = ("torchvision", "timm")


def is_library_model(name: Any) -> bool:
    """A library's registry entry (``torchvision:resnet18``), not an import path of the user's code."""
    return isinstance(name, str) and name.partition(":")[0] in LIBRARIES and bool(name.partition(":")[2])
