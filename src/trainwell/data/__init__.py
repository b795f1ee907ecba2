"""Datasets: a registry of builders, each returning a :class:`DataBundle` of train / val / test splits.

Importing this package is cheap (the registry names every built-in without importing torch);
``DataBundle`` and ``build_data`` import the data modules, and torch, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainwell.data.registry import DATASETS

if TYPE_CHECKING:
    from trainwell.config import DataConfig
    from trainwell.data.bundle import DataBundle, Preprocess, TensorData


def build_data(cfg: DataConfig) -> DataBundle:
    """Build the dataset named by ``cfg.name`` (already validated)."""
    return DATASETS.get(cfg.name)(cfg)


def __getattr__(name: str) -> Any:
    if name in ("DataBundle", "Preprocess", "TensorData"):
        from trainwell.data import bundle

        return getattr(bundle, name)
    raise AttributeError(f"module 'trainwell.data' has no attribute {name!r}")


__all__ = ["DATASETS", "DataBundle", "Preprocess", "TensorData", "build_data"]
