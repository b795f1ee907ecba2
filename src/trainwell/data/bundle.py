"""What every dataset builder returns: the splits, the input shape, the classes and the preprocessing."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch.utils.data import Dataset


class TensorData(Dataset):
    """An in-memory split: raw inputs (uint8 pixels or float features) and int64 labels.

    Indexing with a list of indices returns a whole batch at once, which is much
    faster than collating item by item (the engine uses this for in-memory data).
    """

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        if len(x) != len(y):
            raise ValueError(f"{len(x)} inputs but {len(y)} labels")
        self.x = x
        self.y = y

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[index], self.y[index]


@dataclass
class Preprocess:
    """Raw batch -> model input. Stored in every checkpoint so ``predict`` does exactly the same.

    ``scale`` divides raw values (255 for 8-bit pixels); ``mean`` / ``std`` are per
    channel (images) or per feature (tables), measured on the training split.
    """

    kind: str  # "image" or "tabular"
    input_shape: list[int]  # one sample, e.g. [1, 28, 28] or [13]
    scale: float = 1.0
    mean: list[float] = field(default_factory=list)
    std: list[float] = field(default_factory=list)
    features: list[str] = field(default_factory=list)  # tabular: the feature columns, in order
    # images read from files: the typical (H, W) of the training files before resizing; empty when
    # they already had ``input_shape``'s size (and in checkpoints made before it was recorded)
    source_size: list[int] = field(default_factory=list)
    # images read from files: the shorter side resized to this before the centre crop of ``input_shape``'s size
    # (None: resized straight to it), with this resampling filter (``trainwell.data.geometry``)
    resize_size: int | None = None
    interpolation: str = "bilinear"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Preprocess:
        return cls(**d)

    def _stats(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shape = (-1, 1, 1) if self.kind == "image" else (-1,)
        mean = torch.tensor(self.mean, dtype=x.dtype, device=x.device).view(shape)
        std = torch.tensor(self.std, dtype=x.dtype, device=x.device).view(shape)
        return mean, std

    def scaled(self, x: torch.Tensor) -> torch.Tensor:
        x = x.float()
        return x / self.scale if self.scale != 1.0 else x

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        if not self.mean:
            return x
        mean, std = self._stats(x)
        return (x - mean) / std

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.normalize(self.scaled(x))


def fit_stats(x: torch.Tensor, kind: str, scale: float) -> tuple[list[float], list[float]]:
    """Per-channel (images, N×C×H×W) or per-feature (tables, N×F) mean and std of the training split."""
    x = x.double() / scale
    dims = (0, 2, 3) if kind == "image" else (0,)
    mean = x.mean(dim=dims)
    std = x.std(dim=dims)
    std = torch.where(std > 1e-8, std, torch.ones_like(std))  # constant columns: leave them centred
    return [float(v) for v in mean], [float(v) for v in std]


@dataclass
class DataBundle:
    """The splits of one dataset, ready for the engine."""

    train: Dataset
    val: Dataset | None
    test: Dataset | None
    num_classes: int
    class_names: list[str]
    preprocess: Preprocess
    info: dict[str, Any] = field(default_factory=dict)  # source, split sizes, split seed, label mapping

    @property
    def in_memory(self) -> bool:
        return isinstance(self.train, TensorData)

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.preprocess.input_shape)
