"""``image-folder:PATH`` — one sub-folder per class, read image by image (never all in memory)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from trainwell._errors import DataError
from trainwell.config import MAX_IMAGE_SIDE, DataConfig
from trainwell.data.bundle import DataBundle, Preprocess
from trainwell.data.input_check import file_size
from trainwell.data.splits import FRACTION_KEYS, split_indices

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}
_STATS_SAMPLE = 1000  # images used to measure mean / std: plenty for two numbers per channel
MAX_TRAINING_PIXELS = MAX_IMAGE_SIDE * MAX_IMAGE_SIDE  # the largest training image, however its size is chosen


def load_image(path: Path, channels: int, size: tuple[int, int]) -> torch.Tensor:
    """One image file -> float tensor (C, H, W) in [0, 1]; the same code serves training and predict."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            arr = _pixels(img, channels, size)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        # Training checks every file first (_check_readable, which offers data.skip_bad); here the
        # file is one the user named to predict / embed / verify, which take no --set.
        raise DataError(f"Cannot read image {str(path)!r}: {e}.",
                        fix="leave this file out, or replace it with a readable image") from None
    t = torch.from_numpy(arr.copy())
    return t.unsqueeze(0) if t.ndim == 2 else t.permute(2, 0, 1)


_WIDE = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")  # 16-bit, 32-bit integer and float grayscale


def _white(mode: str, values: np.ndarray) -> float:
    """The value that is white in a wide grayscale image: 65535 for 16-bit files (Pillow may open them as 32-bit
    "I"), 255 for 8-bit values held as "I", 1 for floats in [0, 1], else a float image's own largest value."""
    if mode.startswith("I;16") or (mode == "I" and values.max() > 255):
        return 65535.0
    return 255.0 if mode == "I" else max(float(values.max()), 1.0)


def _pixels(img: Any, channels: int, size: tuple[int, int]) -> np.ndarray:
    """An opened image as float32 values in [0, 1], (H, W) or (H, W, 3), the way a photo is meant to be seen:
    turned as its EXIF orientation says, transparency composited onto white (not whatever colour the
    transparent pixels hold), 16-bit and float grayscale scaled to [0, 1] (not clipped at 255)."""
    from PIL import Image, ImageOps

    img = ImageOps.exif_transpose(img)
    target = (size[1], size[0])
    if img.mode in _WIDE:
        values = np.asarray(img, dtype=np.float32)
        gray = Image.fromarray(np.clip(values / _white(img.mode, values), 0, 1).astype(np.float32), mode="F")
        if gray.size != target:
            gray = gray.resize(target, Image.BILINEAR)
        out = np.asarray(gray, dtype=np.float32)
        return out if channels == 1 else np.repeat(out[:, :, None], 3, axis=2)
    if "A" in img.getbands() or "transparency" in img.info:
        rgba = img.convert("RGBA")
        img = Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba)
    img = img.convert("L" if channels == 1 else "RGB")
    if img.size != target:
        img = img.resize(target, Image.BILINEAR)
    return np.asarray(img, dtype=np.float32) / 255.0


class ImageFiles(Dataset):
    """(path, class index) pairs decoded on access, so big folders stream from disk."""

    def __init__(self, items: list[tuple[Path, int]], channels: int, size: tuple[int, int]) -> None:
        self.items = items
        self.channels = channels
        self.size = size

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        path, label = self.items[i]
        return load_image(path, self.channels, self.size), label


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
    train = ImageFiles(train_items, channels, size)
    rng = np.random.default_rng(cfg.split_seed)
    sample = rng.choice(len(train), size=min(_STATS_SAMPLE, len(train)), replace=False)
    mean, std = _channel_stats(train, sample)
    # The files' own size (median of the sample), so predict can tell when an input is far from it.
    source = [int(v) for v in np.median([file_size(train_items[int(i)][0])[::-1] for i in sample], axis=0)]
    pre = Preprocess(kind="image", input_shape=[channels, *size], scale=1.0, mean=mean, std=std,
                     source_size=source if tuple(source) != tuple(size) else [])
    info: dict[str, Any] = {"source": f"image folder {root}", "layout": layout, "split_seed": cfg.split_seed,
                            "sizes": {k: len(v or []) for k, v in (("train", train_items), ("val", splits["val"]),
                                                                   ("test", splits["test"]))}}
    if skipped:
        info["skipped_unreadable"] = len(skipped)
        info["skipped_files"] = skipped[:20]
    return DataBundle(
        train=train,
        val=ImageFiles(splits["val"], channels, size) if splits["val"] else None,
        test=ImageFiles(splits["test"], channels, size) if splits["test"] else None,
        num_classes=len(classes), class_names=classes, preprocess=pre, info=info)
