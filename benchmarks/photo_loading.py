"""What an image folder of photos costs to load: milliseconds per image for each way an image takes the model's
size (straight resize; the published weights' shorter-side resize and centre crop, bilinear and bicubic) and for
photo augmentation (random resized crop, flip, TrivialAugmentWide), on one core; then ``data_wait`` (the share of
training time spent waiting for the next batch) of a short run of torchvision's resnet18 with the images decoded in
the training process (``data.num_workers=0``) and in one worker process, whose losses must be the same.

The photos are made here (blurred noise saved as JPEG, 500 x 375, a common camera-phone thumbnail size), so no
download is needed; decoding real photos of that size costs about the same.

    python benchmarks/photo_loading.py [--images 96] [--side 224] [--train-side 64] [--epochs 2] [--json F]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))  # this checkout's trainwell, as the runs it starts use


def make_photos(root: Path, images: int) -> list[Path]:
    from PIL import Image, ImageFilter

    rng = np.random.default_rng(0)
    paths = []
    for i in range(images):
        folder = root / ("a" if i % 2 else "b")
        folder.mkdir(parents=True, exist_ok=True)
        noise = Image.fromarray(rng.integers(0, 255, (375, 500, 3), dtype=np.uint8))
        noise.filter(ImageFilter.GaussianBlur(3)).save(folder / f"{i}.jpg", quality=90)
        paths.append(folder / f"{i}.jpg")
    return paths


def per_image_ms(paths: list[Path], side: int) -> dict[str, float]:
    import torch

    from trainwell.data.folder import load_augmented, load_image
    from trainwell.data.geometry import ImageGeometry
    from trainwell.data.photo import PhotoAugment

    torch.set_num_threads(1)
    crop = int(side * 256 / 224)
    ways = {f"straight {side}": lambda p, k: load_image(p, 3, ImageGeometry((side, side))),
            f"shorter side {crop} + centre {side}, bilinear":
                lambda p, k: load_image(p, 3, ImageGeometry((side, side), crop, "bilinear")),
            f"shorter side {crop} + centre {side}, bicubic":
                lambda p, k: load_image(p, 3, ImageGeometry((side, side), crop, "bicubic"))}
    augment = PhotoAugment(ImageGeometry((side, side), crop, "bilinear"))
    ways[f"photo augmentation to {side}"] = lambda p, k: load_augmented(p, 3, augment, k)
    out = {}
    for name, load in ways.items():
        load(paths[0], 0)  # imports and first-call set-up outside the timing
        started = time.perf_counter()
        for k, path in enumerate(paths):
            load(path, k)
        out[name] = (time.perf_counter() - started) / len(paths) * 1000
    return out


def train_rows(folder: Path, out: Path, workers: int, side: int, epochs: int) -> list[dict[str, str]]:
    run = out / f"workers{workers}"
    subprocess.run([sys.executable, "-m", "trainwell", "train", "--data", f"image-folder:{folder}", "--model",
                    "torchvision:resnet18", "--set", f"data.image_size={side}", "--epochs", str(epochs),
                    "--batch-size", "16", "--threads", "1", "--no-progress", "--no-doctor", "--set",
                    f"data.num_workers={workers}", "--out", str(run)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(HERE.parent / "src")})
    with (run / "metrics.csv").open() as f:
        return list(csv.DictReader(f))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=96)
    parser.add_argument("--side", type=int, default=224, help="the crop side of the per-image timings")
    parser.add_argument("--train-side", type=int, default=64, help="the crop side of the short training runs")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "photos"
        paths = make_photos(folder, args.images)
        print(f"{args.images} JPEG photos of 500 x 375, one core:")
        results["ms_per_image"] = per_image_ms(paths, args.side)
        for name, ms in results["ms_per_image"].items():  # type: ignore[attr-defined]
            print(f"  {name:<45} {ms:6.1f} ms per image")
        print(f"resnet18 at {args.train_side} x {args.train_side}, batch 16, 1 thread: data_wait per epoch")
        losses = []
        for workers in (0, 1):
            rows = train_rows(folder, Path(tmp), workers, args.train_side, args.epochs)
            print(f"  data.num_workers={workers}: " + ", ".join(f"{100 * float(r['data_wait']):.0f} %" for r in rows))
            losses.append([r["train_loss"] for r in rows])
            results[f"data_wait_workers{workers}"] = [float(r["data_wait"]) for r in rows]
        results["losses_identical"] = losses[0] == losses[1]
        print("  training losses " + ("identical" if losses[0] == losses[1] else f"differ: {losses}"))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
