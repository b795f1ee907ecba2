"""Real photos are not digits: image files of any mode load the way they are meant to be seen (EXIF orientation,
transparency over white, 16-bit grayscale scaled rather than clipped), in training and in predict alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from trainwell.data.folder import load_image


def test_a_16_bit_grayscale_png_is_scaled_not_clipped(tmp_path: Path) -> None:
    ramp = np.linspace(0, 65535, 16, dtype=np.uint16).reshape(4, 4)
    Image.fromarray(ramp).save(tmp_path / "deep.png")  # Pillow opens it as a 16-bit mode
    with Image.open(tmp_path / "deep.png") as img:
        assert img.mode.startswith("I")
    x = load_image(tmp_path / "deep.png", 1, (4, 4))
    assert x.shape == (1, 4, 4)
    assert x.min().item() == pytest.approx(0.0) and x.max().item() == pytest.approx(1.0)
    assert x[0, 1, 0].item() == pytest.approx(ramp[1, 0] / 65535, abs=1e-4)  # mid-grey stays mid-grey
    rgb = load_image(tmp_path / "deep.png", 3, (4, 4))
    assert rgb.shape == (3, 4, 4) and (rgb[0] == rgb[2]).all()


def test_transparency_is_composited_onto_white(tmp_path: Path) -> None:
    rgba = np.zeros((2, 2, 4), dtype=np.uint8)  # fully transparent black ...
    rgba[0, 0] = (255, 0, 0, 255)  # ... but one opaque red pixel
    Image.fromarray(rgba, mode="RGBA").save(tmp_path / "cut.png")
    x = load_image(tmp_path / "cut.png", 3, (2, 2))
    assert x[:, 0, 0].tolist() == [1.0, 0.0, 0.0]
    assert x[:, 1, 1].tolist() == [1.0, 1.0, 1.0]  # white, not the black the transparent pixels hold
    palette = Image.fromarray(np.array([[0, 1], [1, 1]], dtype=np.uint8), mode="P")
    palette.putpalette([0, 0, 0, 0, 255, 0] + [0] * 762)
    palette.save(tmp_path / "gif.png", transparency=0)
    y = load_image(tmp_path / "gif.png", 3, (2, 2))
    assert y[:, 0, 0].tolist() == [1.0, 1.0, 1.0] and y[:, 1, 1].tolist() == [0.0, 1.0, 0.0]


def test_a_photo_is_turned_as_its_exif_orientation_says(tmp_path: Path) -> None:
    pixels = np.zeros((2, 4), dtype=np.uint8)
    pixels[0, 0] = 255  # a wide image, its top-left pixel white
    img = Image.fromarray(pixels, mode="L")
    exif = img.getexif()
    exif[0x0112] = 6  # "rotate 90 degrees clockwise to view"
    img.save(tmp_path / "phone.png", exif=exif)
    x = load_image(tmp_path / "phone.png", 1, (4, 2))  # seen upright: tall
    assert x.shape == (1, 4, 2) and x[0, 0, 1].item() == 1.0 and x.sum().item() == 1.0


def test_ordinary_images_load_as_before(tmp_path: Path) -> None:
    pixels = np.arange(16, dtype=np.uint8).reshape(4, 4) * 16
    Image.fromarray(pixels, mode="L").save(tmp_path / "plain.png")
    x = load_image(tmp_path / "plain.png", 1, (4, 4))
    assert np.array_equal(x[0].numpy(), pixels.astype(np.float32) / 255.0)
