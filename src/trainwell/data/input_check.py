"""Does an input given to ``predict`` look like the training data? Plain warnings when it clearly does not.

A model answers confidently on anything; these catch the usual mistakes before the answer is trusted:
colours inverted against the training images, 0-1 values saved into an 8-bit file (the image reads as
black), and a picture much larger or smaller than the training images (it is resized, so the object
appears at another scale).
"""

from __future__ import annotations

from pathlib import Path

import torch

from trainwell.data.bundle import Preprocess

SIZE_RATIO = 2.0  # a side this many times larger or smaller than training is "very different"


def file_size(path: Path) -> tuple[int, int]:
    """(width, height) of an image file, read from its header."""
    from PIL import Image

    with Image.open(path) as img:
        return img.size


def image_warnings(name: str, x: torch.Tensor, pre: Preprocess, size: tuple[int, int]) -> list[str]:
    """Warnings for one image ``x`` (C, H, W, values 0-1, already resized) whose file is ``size`` (W, H)."""
    warnings = []
    if pre.mean:
        mean, std = sum(pre.mean) / len(pre.mean), sum(pre.std) / len(pre.std)
        brightness = float(x.mean())
        if float(x.max()) <= 2 / 255 and mean > 4 / 255:
            warnings.append(f"{name}: the image is black (no pixel above {255 * float(x.max()):.0f} of 255), "
                            f"where the training images average {255 * mean:.0f}: wrong scale? Values 0-1 saved as 8-bit "
                            "pixels need multiplying by 255 first.")
        elif abs(brightness - mean) > std and abs((1 - brightness) - mean) < abs(brightness - mean) / 2:
            look = "light on a dark background" if mean < 0.5 else "dark on a light background"
            warnings.append(f"{name}: colours look inverted: mean brightness {brightness:.2f} (0-1) where the "
                            f"training images average {mean:.2f}, {look}; invert it (e.g. PIL.ImageOps.invert) "
                            "for a meaningful answer.")
    trained = tuple(pre.source_size[::-1]) if pre.source_size else (pre.input_shape[2], pre.input_shape[1])
    ratio = max(size[0] / trained[0], trained[0] / size[0], size[1] / trained[1], trained[1] / size[1])
    if ratio >= SIZE_RATIO:
        model_size = f"{pre.input_shape[2]}x{pre.input_shape[1]}"
        warnings.append(f"{name}: {size[0]}x{size[1]} pixels, resized to {model_size} for the model; the training "
                        f"images were {trained[0]}x{trained[1]}, so the object appears at a very different scale: "
                        "crop it to the object, framed like the training images.")
    return warnings
