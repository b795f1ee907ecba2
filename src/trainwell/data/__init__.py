"""Datasets: a registry of builders, each returning a :class:`DataBundle` of train / val / test splits.

Importing this package imports torch; the CLI imports it only in commands that train or predict.
"""

from __future__ import annotations

from trainwell.config import DataConfig
from trainwell.data.bundle import DataBundle, Preprocess, TensorData
from trainwell.data.registry import DATASETS

from trainwell.data import folder, images, tabular, text  # noqa: E402,F401  (register the built-ins)
from trainwell.data import faces  # noqa: E402,F401  (lfw, olivetti-faces: task embedding)


def build_data(cfg: DataConfig) -> DataBundle:
    """Build the dataset named by ``cfg.name`` (already validated)."""
    return DATASETS.get(cfg.name)(cfg)


__all__ = ["DATASETS", "DataBundle", "Preprocess", "TensorData", "build_data"]
