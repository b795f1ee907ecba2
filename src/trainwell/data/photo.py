"""Photo augmentation (``data.augment: photo``), per image in the loader: a random resized crop to the model's
size, a horizontal flip and TrivialAugmentWide, from ``torchvision.transforms.v2``, the training recipe of
published image backbones.

The v2 transforms draw from torch's global generator and take none of their own. Exact resume needs each image's
draws to be a function of (seed, epoch, sample index) whatever batch, micro-batch, process or loader worker it
lands in, so the loader hands the dataset a :class:`SampleKey` holding the image's own seed, and the transforms
run inside ``torch.random.fork_rng`` with the CPU generator set to it: the global stream (dropout) is left as
it was, in the main process and in workers alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from trainwell._seeds import mix_seed
from trainwell.data.geometry import ImageGeometry

PHOTO_TAG = 5_381  # this use's own tag among the seeds made from (seed, epoch, ...)
CROP_SCALE = (0.08, 1.0)  # RandomResizedCrop's share of the image's area (torchvision's and timm's default)


@dataclass(frozen=True)
class SampleKey:
    """A sample index as a training loader asks for it: with the seed of the image's augmentation draws."""

    index: int
    seed: int


def sample_key(seed: int, epoch: int, index: int) -> SampleKey:
    return SampleKey(index, mix_seed(seed, epoch, PHOTO_TAG, index))


class PhotoAugment:
    """Random resized crop (to the model's size, with the geometry's filter) on the decoded image, then a
    horizontal flip and TrivialAugmentWide on its pixels."""

    def __init__(self, geometry: ImageGeometry) -> None:
        from torchvision.transforms import v2

        self.geometry = geometry
        self.crop = v2.RandomResizedCrop(list(geometry.size), scale=CROP_SCALE, interpolation=geometry.mode,
                                         antialias=True)
        self.pixels = v2.Compose([v2.RandomHorizontalFlip(), v2.TrivialAugmentWide(interpolation=geometry.mode)])

    def __call__(self, img: Any, seed: int, to_tensor: Callable[[Any], torch.Tensor]) -> torch.Tensor:
        """``img`` (PIL) cropped, flipped and augmented with draws from ``seed`` alone, made a (C, H, W) tensor by
        ``to_tensor``. 8-bit images stay PIL images throughout (Pillow's operations are several times faster than
        v2's on small tensors); a float image ("F", wide grayscale), which Pillow's colour operations refuse, is
        augmented as a tensor."""
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(seed)  # the CPU generator only: CUDA's streams are not touched
            img = self.crop(img)
            if img.mode == "F":
                return self.pixels(to_tensor(img))  # type: ignore[no-any-return]
            return to_tensor(self.pixels(img))

    def words(self) -> str:
        h, w = self.geometry.size
        return (f"random resized crop to {w} x {h} ({self.geometry.interpolation}), horizontal flip, "
                "TrivialAugmentWide")
