"""``image-folder:PATH`` — one sub-folder per class, read image by image (never all in memory).

An image folder always streams: each image is decoded, sized (``trainwell.data.geometry``) and, for training
under ``data.augment: photo``, augmented (``trainwell.data.photo``) when the loader asks for it, in the loader's
worker processes (``trainwell.machine.loader_defaults``), while the model trains on the batch before. Nothing is
decoded up front but the sample that measures the mean and std: a folder of any size takes the memory of a few
batches, and the operating system's file cache keeps a small folder's files in memory after the first epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from trainwell._errors import DataError
from trainwell.config import MAX_IMAGE_SIDE, DataConfig
from trainwell.data.bundle import DataBundle, Preprocess
from trainwell.data.geometry import ImageGeometry
from trainwell.data.input_check import file_size
from trainwell.data.photo import PhotoAugment, SampleKey
from trainwell.data.splits import FRACTION_KEYS, split_indices

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}
_STATS_SAMPLE = 1000  # images used to measure mean / std: plenty for two numbers per channel
MAX_TRAINING_PIXELS = MAX_IMAGE_SIDE * MAX_IMAGE_SIDE  # the largest training image, however its size is chosen


def load_image(path: Path, channels: int, geometry: ImageGeometry | tuple[int, int]) -> torch.Tensor:
    """One image file -> float tensor (C, H, W) in [0, 1] at ``geometry`` (or a (H, W) size, resized straight to
    it); the same code serves training, evaluation and predict."""
    fit = _geometry(geometry)

    def decoded(img: Any) -> np.ndarray:
        upright = _upright(img, channels)
        return _unit(np.asarray(fit.apply(upright), dtype=np.float32), upright.mode == "F", channels)

    return _read(path, decoded)


def _geometry(geometry: ImageGeometry | tuple[int, int]) -> ImageGeometry:
    return geometry if isinstance(geometry, ImageGeometry) else ImageGeometry((int(geometry[0]), int(geometry[1])))


def load_augmented(path: Path, channels: int, augment: PhotoAugment, seed: int) -> torch.Tensor:
    """One training image file, augmented as a photo with the draws of ``seed`` (``trainwell.data.photo``)."""
    def augmented(img: Any) -> torch.Tensor:
        upright = _upright(img, channels)
        x = augment(upright, seed, lambda crop: _chw(torch.from_numpy(np.array(crop))))
        return _unit(x, upright.mode == "F", channels)

    return _read(path, augmented)


def _read(path: Path, decode: Callable[[Any], Any]) -> torch.Tensor:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            out = decode(img)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        # Training checks every file first (_check_readable, which offers data.skip_bad); here the
        # file is one the user named to predict / embed / verify, which take no --set.
        raise DataError(f"Cannot read image {str(path)!r}: {e}.",
                        fix="leave this file out, or replace it with a readable image") from None
    return out if isinstance(out, torch.Tensor) else _chw(torch.from_numpy(out.copy()))


def _chw(t: torch.Tensor) -> torch.Tensor:
    return t.unsqueeze(0) if t.ndim == 2 else t.permute(2, 0, 1)


def _unit(x: Any, wide: bool, channels: int) -> Any:
    """Pixels (array (H, W[, 3]) or tensor (C, H, W)) as float32 in [0, 1]: 8-bit values divided by 255, a wide
    grayscale image's already scaled, repeated to 3 channels where RGB is asked for."""
    if isinstance(x, np.ndarray):
        out = x if wide else x / np.float32(255.0)
        return np.repeat(out[:, :, None], 3, axis=2) if wide and channels == 3 else out
    out = x.float() if wide else x.float() / 255.0
    return out.expand(3, -1, -1).contiguous() if wide and channels == 3 else out


_WIDE = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")  # 16-bit, 32-bit integer and float grayscale


def _white(mode: str, values: np.ndarray) -> float:
    """The value that is white in a wide grayscale image: 65535 for 16-bit files (Pillow may open them as 32-bit
    "I"), 255 for 8-bit values held as "I", 1 for floats in [0, 1], else a float image's own largest value."""
    if mode.startswith("I;16") or (mode == "I" and values.max() > 255):
        return 65535.0
    return 255.0 if mode == "I" else max(float(values.max()), 1.0)


def _upright(img: Any, channels: int) -> Any:
    """An opened image the way a photo is meant to be seen, before any resizing: turned as its EXIF orientation
    says, transparency composited onto white (not whatever colour the transparent pixels hold); "L" or "RGB" as
    ``channels`` asks, except 16-bit and float grayscale, kept as a float image ("F") scaled to [0, 1] (not
    clipped at 255)."""
    from PIL import Image, ImageOps

    img = ImageOps.exif_transpose(img)
    if img.mode in _WIDE:
        values = np.asarray(img, dtype=np.float32)
        return Image.fromarray(np.clip(values / _white(img.mode, values), 0, 1).astype(np.float32), mode="F")
    if "A" in img.getbands() or "transparency" in img.info:
        rgba = img.convert("RGBA")
        img = Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba)
    return img.convert("L" if channels == 1 else "RGB")


class ImageFiles(Dataset):
    """(path, class index) pairs decoded on access, so big folders stream from disk (in the loader's worker
    processes). With ``augment`` (the training split under ``data.augment: photo``) an item asked for by a
    :class:`~trainwell.data.photo.SampleKey` is augmented with that key's draws; one asked for by a plain index is
    the image at ``geometry``, as evaluation sees it."""

    def __init__(self, items: list[tuple[Path, int]], channels: int, geometry: ImageGeometry | tuple[int, int],
                 augment: PhotoAugment | None = None) -> None:
        self.items = items
        self.channels = channels
        self.geometry = _geometry(geometry)
        self.augment = augment

    @property
    def size(self) -> tuple[int, int]:
        return self.geometry.size

    @property
    def draws_per_sample(self) -> bool:
        """Whether a training loader should ask for items by ``SampleKey`` (``trainwell.data.loading``)."""
        return self.augment is not None

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int | SampleKey) -> tuple[torch.Tensor, int]:
        path, label = self.items[i.index if isinstance(i, SampleKey) else i]
        if isinstance(i, SampleKey) and self.augment is not None:
            return load_augmented(path, self.channels, self.augment, i.seed), label
        return load_image(path, self.channels, self.geometry), label


def _scan(folder: Path, classes: list[str] | None) -> tuple[list[tuple[Path, int]], list[str]]:
    if not folder.is_dir():
        raise DataError(f"Image folder {str(folder)!r} does not exist.", fix="check the path after image-folder:")
    found = sorted(d.name for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))
    classes = classes or found
    if not classes:
        raise DataError(f"Image folder {str(folder)!r} has no class sub-folders.",
                        fix="put each class's images in its own sub-folder: PATH/cat/1.png, PATH/dog/2.png")
    unknown = sorted(set(found) - set(classes))
    if unknown:
        raise DataError(f"{folder}: class folder(s) {', '.join(unknown)} do not exist in the training folder.")
    items = []
    for idx, name in enumerate(classes):
        for p in sorted((folder / name).rglob("*")) if (folder / name).is_dir() else []:
            if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES:
                items.append((p, idx))
    if not items:
        raise DataError(f"Image folder {str(folder)!r} contains no images ({', '.join(sorted(IMAGE_SUFFIXES))}).")
    return items, classes


def _check_readable(items: list[tuple[Path, int]], skip_bad: bool) -> tuple[list[tuple[Path, int]], list[str]]:
    """Open every file once up front: a corrupt image fails now, naming the file, not mid-epoch."""
    from PIL import Image

    good, bad = [], []
    for path, label in items:
        try:
            with Image.open(path) as img:
                img.verify()
            good.append((path, label))
        except Exception as e:  # noqa: BLE001 - PIL raises many types for broken files
            if not skip_bad:
                raise DataError(f"Cannot read image {str(path)!r}: {e}.",
                                fix="remove or replace the file, or skip unreadable images with "
                                    "--set data.skip_bad=true") from None
            bad.append(str(path))
    return good, bad


def _check_training_size(first: Path, size: tuple[int, int], channels: int) -> None:
    """Without ``data.image_size`` every image is resized to the first training image's size: refuse a size over
    ``MAX_TRAINING_PIXELS`` (a 10000 x 10000 photo would make each image 1.2 GB of floats), naming the file."""
    height, width = size
    if height * width > MAX_TRAINING_PIXELS:
        side = MAX_IMAGE_SIDE
        raise DataError(f"{first}: the first training image is {width} x {height} pixels, and without "
                        f"data.image_size every image is resized to it ({height * width * channels * 4 / 2**20:,.0f} MB "
                        f"per image as floats); trainwell trains on images of at most {side} x {side} pixels.",
                        fix="choose the side images are resized to, e.g. --set data.image_size=224 "
                            f"(at most {side})")


def _channel_stats(train: ImageFiles, sample: np.ndarray) -> tuple[list[float], list[float]]:
    """Per-channel mean and (sample) standard deviation over the pixels of the ``sample`` images, as
    ``fit_stats`` gives, summed one image at a time so memory holds one image, not the whole sample."""
    total = squares = None
    count = 0
    for i in sample:
        x = train[int(i)][0].double()
        s, q = x.sum(dim=(1, 2)), (x * x).sum(dim=(1, 2))
        total, squares = (s, q) if total is None else (total + s, squares + q)
        count += x.shape[1] * x.shape[2]
    assert total is not None and squares is not None
    mean = total / count
    var = (squares - count * mean * mean) / max(count - 1, 1)
    std = var.clamp(min=0).sqrt()
    std = torch.where(std > 1e-8, std, torch.ones_like(std))  # constant channels: leave them centred
    return [float(v) for v in mean], [float(v) for v in std]


def image_folder(cfg: DataConfig) -> DataBundle:
    from PIL import Image

    root = Path(cfg.path or "").expanduser()
    if (root / "train").is_dir():
        train_items, classes = _scan(root / "train", None)
        val_items = _scan(root / "val", classes)[0] if (root / "val").is_dir() else None
        test_items = _scan(root / "test", classes)[0] if (root / "test").is_dir() else None
        layout = "train/val/test folders"
    else:
        train_items, classes = _scan(root, None)
        val_items = test_items = None
        layout = "one folder, split by fraction"
    skipped: list[str] = []
    splits: dict[str, list[tuple[Path, int]] | None] = {"train": train_items, "val": val_items, "test": test_items}
    for key, items in splits.items():
        if items is not None:
            splits[key], bad = _check_readable(items, cfg.skip_bad)
            skipped += bad
    train_items = splits["train"] or []
    if val_items is None:
        labels = np.array([lab for _, lab in train_items])
        fracs = [cfg.val_fraction] + ([cfg.test_fraction] if test_items is None else [])
        parts = split_indices(labels, fracs, cfg.split_seed, names=FRACTION_KEYS)
        splits["val"] = [train_items[i] for i in parts[1]]
        if test_items is None:
            splits["test"] = [train_items[i] for i in parts[2]]
        train_items = [train_items[i] for i in parts[0]]
    with Image.open(train_items[0][0]) as first:
        channels = cfg.channels or (1 if first.mode in ("L", "LA", "1", *_WIDE) else 3)
        size = (cfg.image_size, cfg.image_size) if cfg.image_size else (first.size[1], first.size[0])
    if not cfg.image_size:
        _check_training_size(train_items[0][0], size, channels)
    geometry = ImageGeometry(size, cfg.resize_size, cfg.interpolation or "bilinear")
    augment = PhotoAugment(geometry) if cfg.augment == "photo" else None
    train = ImageFiles(train_items, channels, geometry, augment)
    rng = np.random.default_rng(cfg.split_seed)
    sample = rng.choice(len(train), size=min(_STATS_SAMPLE, len(train)), replace=False)
    mean, std = _channel_stats(train, sample)
    # The files' own size (median of the sample), so predict can tell when an input is far from it.
    source = [int(v) for v in np.median([file_size(train_items[int(i)][0])[::-1] for i in sample], axis=0)]
    pre = Preprocess(kind="image", input_shape=[channels, *size], scale=1.0, mean=mean, std=std,
                     source_size=source if tuple(source) != tuple(size) else [], resize_size=geometry.resize,
                     interpolation=geometry.interpolation)
    info: dict[str, Any] = {"source": f"image folder {root}", "layout": layout, "split_seed": cfg.split_seed,
                            "sizes": {k: len(v or []) for k, v in (("train", train_items), ("val", splits["val"]),
                                                                   ("test", splits["test"]))}}
    if augment is not None:
        info["notes"] = [(f"training images augmented as photos: {augment.words()} (data.augment=photo; "
                          "data.augment=none turns it off)")]
    if skipped:
        info["skipped_unreadable"] = len(skipped)
        info["skipped_files"] = skipped[:20]
    return DataBundle(
        train=train,
        val=ImageFiles(splits["val"], channels, geometry) if splits["val"] else None,
        test=ImageFiles(splits["test"], channels, geometry) if splits["test"] else None,
        num_classes=len(classes), class_names=classes, preprocess=pre, info=info)
