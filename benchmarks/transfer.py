"""Does starting from pretrained weights help? The built-in CNN trained on the digits 0-4 of mnist-5k, then
fine-tuned on the digits 5-9 with 5, 10 and 20 training images per class (``--pretrained RUN_DIR`` and the
fine-tuning recipe's defaults), against the same model trained from scratch with the same data and epochs; test
accuracy on the same 500 held-out images of 5-9 (100 per class), for several seeds, side by side in one run.

Every run, the pretraining included, uses the built-in digit recipe (the one ``trainwell train`` uses on
mnist-5k: a [32, 64, 128] CNN with batch norm and dropout, small random rotations, shifts and zooms, a one-cycle
schedule peaking at 0.01, label smoothing), which an image folder does not get by default.

Everything goes through the command line a user types (``trainwell train --data image-folder:DIR``): the digits
are written out as PNG folders first (train / val / test), the way a user's own photos would be. ``--variant``
adds fine-tuned runs with other settings beside the defaults, sharing the same scratch runs.

    python benchmarks/transfer.py [--sizes 5 10 20] [--seeds 0 1 2 3 4] [--epochs 30]
                                  [--variant train.finetune.backbone_lr=1.0 ...] [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))  # this checkout's trainwell, as the runs it starts use
TEST_PER_CLASS = 100
VAL_PER_CLASS = 5
COMMON = ["--model", "cnn", "--threads", "1", "--no-progress", "--no-doctor", "--set", "data.channels=1"]
# The digit recipe of mnist-5k (trainwell/data/registry.py), spelled out for image folders.
RECIPE = ["--set", "data.augment=affine", "--set", "data.shift=2", "--set", "data.rotate=10", "--set", "data.zoom=0.1",
          "--set", "model.channels=[32,64,128]", "--set", "model.hidden=[128]", "--set", "model.dropout=0.2",
          "--lr", "0.01", "--set", "train.scheduler=onecycle", "--set", "train.label_smoothing=0.1"]


def _write(folder: Path, images: np.ndarray, labels: np.ndarray, indices: list[int]) -> None:
    from PIL import Image

    for i in indices:
        target = folder / str(labels[i])
        target.mkdir(parents=True, exist_ok=True)
        Image.fromarray(images[i], mode="L").save(target / f"{i}.png")


def make_folders(root: Path, sizes: list[int]) -> dict[str, Path]:
    """digits04/ (all of 0-4, split by fraction) and, per size n, digits59-n/{train,val,test}: n training images
    per class of 5-9 (the first n of a fixed shuffle, so the smaller sets are part of the larger), 5 for
    validation and the same 100 per class for testing."""
    from trainwell.data.images import mnist_5k_arrays

    images, labels = mnist_5k_arrays()
    images = images[:, 0]
    rng = np.random.default_rng(0)
    folders = {"digits04": root / "digits04"}
    _write(folders["digits04"], images, labels, [i for i in range(len(labels)) if labels[i] < 5])
    order = {c: rng.permutation(np.flatnonzero(labels == c)).tolist() for c in range(5, 10)}
    for n in sizes:
        folder = root / f"digits59-{n}"
        for c, idx in order.items():
            _write(folder / "test", images, labels, idx[:TEST_PER_CLASS])
            _write(folder / "val", images, labels, idx[TEST_PER_CLASS:TEST_PER_CLASS + VAL_PER_CLASS])
            _write(folder / "train", images, labels, idx[TEST_PER_CLASS + VAL_PER_CLASS:][:n])
        folders[f"n{n}"] = folder
    return folders


def train(args: list[str]) -> dict[str, Any]:
    """``trainwell train`` with ``args`` in a process of its own (quiet unless it fails); its summary.json."""
    import os
    import subprocess

    out = Path(args[args.index("--out") + 1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "trainwell", "train", *COMMON, *RECIPE, *args], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"trainwell train {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return json.loads((out / "summary.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--pretrain-epochs", type=int, default=20)
    parser.add_argument("--variant", dest="variants", action="append", default=[], metavar="KEY=VALUE[,KEY=VALUE]",
                        help="fine-tuned runs with these config values too (e.g. train.finetune.backbone_lr=1.0)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    variants = {"finetuned": [], **{v: [a for kv in v.split(",") for a in ("--set", kv)] for v in args.variants}}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tw-transfer-") as tmp:
        root = Path(tmp)
        folders = make_folders(root, args.sizes)
        source = root / "runs" / "digits04"
        pre = train(["--data", f"image-folder:{folders['digits04']}", "--epochs", str(args.pretrain_epochs),
                     "--out", str(source)])
        print(f"pretrained on digits 0-4: test accuracy {pre['test_accuracy']:.3f}", flush=True)
        for n in args.sizes:
            for seed in args.seeds:
                row: dict[str, Any] = {"per_class": n, "seed": seed}
                for i, (name, extra) in enumerate((("scratch", []), *variants.items())):
                    out = root / "runs" / f"{n}-{seed}-{i}"
                    tuned = [] if name == "scratch" else ["--pretrained", str(source), *extra]
                    summary = train(["--data", f"image-folder:{folders[f'n{n}']}", "--epochs", str(args.epochs),
                                     "--batch-size", "16", "--seed", str(seed), "--out", str(out), *tuned])
                    row[name] = summary["test_accuracy"]
                rows.append(row)
                print(row, flush=True)
    print(f"\ntest accuracy on digits 5-9 ({TEST_PER_CLASS * 5} held-out images), mean over seeds "
          f"{args.seeds}, {args.epochs} epochs; gain over scratch (smallest over seeds)")
    for name in variants:
        print(f"\n{name}\n{'per class':>9} {'scratch':>9} {'tuned':>7} {'gain':>7} {'min gain':>9}")
        for n in args.sizes:
            mine = [r for r in rows if r["per_class"] == n]
            scratch = statistics.mean(r["scratch"] for r in mine)
            tuned = statistics.mean(r[name] for r in mine)
            print(f"{n:>9} {scratch:>9.3f} {tuned:>7.3f} {tuned - scratch:>+7.3f} "
                  f"{min(r[name] - r['scratch'] for r in mine):>+9.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
