"""How a decoded image takes the size the model sees, the same way in training, evaluation, predict and export.

Two ways: resized straight to the model's square (the default: digits and drawings, whose whole frame matters), or
as published weights' evaluation transforms do it (torchvision's ``resize_size`` / ``crop_size``, timm's
``crop_pct``): the shorter side resized to ``resize`` with the aspect kept, then the centre square of the model's
size cropped. ``interpolation`` names the resampling filter (Pillow's; the weights' own for published weights).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainwell.data.bundle import Preprocess


@dataclass(frozen=True)
class ImageGeometry:
    size: tuple[int, int]  # (H, W) the model sees
    resize: int | None = None  # the shorter side before the centre crop; None: resized straight to ``size``
    interpolation: str = "bilinear"  # nearest, bilinear, bicubic, lanczos, box, hamming

    @classmethod
    def of(cls, pre: Preprocess) -> ImageGeometry:
        """The geometry a run's preprocessing records (checkpoints before it was recorded: straight, bilinear)."""
        return cls((int(pre.input_shape[1]), int(pre.input_shape[2])), pre.resize_size, pre.interpolation)

    @property
    def mode(self) -> Any:
        """torchvision's ``InterpolationMode`` of the filter."""
        from torchvision.transforms.v2 import InterpolationMode

        return InterpolationMode(self.interpolation)

    def apply(self, img: Any) -> Any:
        """A PIL image at this geometry's size (resized straight, or shorter side then centre crop)."""
        from PIL import Image

        if self.resize is None:
            target = (self.size[1], self.size[0])
            return img if img.size == target else img.resize(target, Image.Resampling[self.interpolation.upper()])
        from torchvision.transforms.v2 import functional as F

        img = F.resize(img, [self.resize], interpolation=self.mode)
        return F.center_crop(img, list(self.size))

    def words(self) -> str:
        """``shorter side 256 (bilinear), centre 224 x 224`` or ``224 x 224 (bilinear)``."""
        h, w = self.size
        if self.resize is None:
            return f"{w} x {h} ({self.interpolation})"
        return f"shorter side {self.resize} ({self.interpolation}), centre {w} x {h}"
