"""``trainwell embed RUN_DIR FILE... --out emb.npy``: one embedding row per image, from an embedding run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from trainwell.cli.code_options import add_code_options, typed_code

_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("embed", help="write embeddings of images with a trained embedding run",
                              description="Loads the run's best checkpoint, applies the training preprocessing and "
                                          "writes an (N, dim) float32 array (.npy); row i is the i-th image, listed "
                                          "in a sidecar text file next to it (OUT with .files.txt).")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("files", nargs="+", metavar="FILE", help="image files, or folders (their images, sorted)")
    p.add_argument("--out", required=True, metavar="EMB.npy", help="the .npy file to write")
    p.add_argument("--checkpoint", choices=["best", "last"], default="best")
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch-size", type=int, default=256)
    add_code_options(p)
    p.set_defaults(func=run)


def load_embedder(run_dir: Path, checkpoint: str = "best", device: str = "cpu",
                  typed: dict[str, str] | None = None) -> tuple[Any, dict[str, Any]]:
    """The run's embedding model (eval mode) and data payload; a clear error for other kinds of run.
    ``typed`` names the user's own model again (see :mod:`trainwell._trust`)."""
    from trainwell._errors import TrainwellError
    from trainwell.cli.predict import load_predictor

    model, data = load_predictor(run_dir, checkpoint, device, typed)
    if data.get("task") != "embedding":
        kind = data.get("task", "classification")
        raise TrainwellError(f"{run_dir} is a {kind} run, not an embedding run: its model gives class scores, "
                             "not vectors to compare.",
                             fix=f"train one with `trainwell train --task embedding`, or use "
                                 f"`trainwell predict {run_dir} FILE...` for this run")
    return model, data


def image_paths(args: list[str]) -> list[Path]:
    """The files given, with each folder replaced by its image files (sorted)."""
    from trainwell._errors import DataError

    paths: list[Path] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _IMAGE_SUFFIXES)
            if not found:
                raise DataError(f"Folder {arg!r} has no images ({', '.join(sorted(_IMAGE_SUFFIXES))}).")
            paths += found
        elif path.is_file():
            paths.append(path)
        else:
            raise DataError(f"No file {arg!r} to embed.", fix="check the path")
    return paths


def embed_images(model: Any, data: dict[str, Any], paths: list[Path], batch_size: int = 256) -> Any:
    """(N, dim) float32 embeddings of image files, preprocessed exactly like the training data."""
    import numpy as np
    import torch

    from trainwell.cli.predict import read_image
    from trainwell.data import Preprocess
    from trainwell.data.geometry import ImageGeometry

    pre = Preprocess.from_dict(data["preprocess"])
    device = next(model.parameters()).device
    # every file is read before anything is written, resized and cropped as in training
    images = [read_image(p, pre.input_shape[0], ImageGeometry.of(pre)) for p in paths]
    out = []
    with torch.inference_mode():
        for start in range(0, len(images), max(1, batch_size)):
            x = pre.normalize(torch.stack(images[start:start + batch_size]))  # (B, C, H, W), values in [0, 1]
            out.append(model(x.to(device)).float().cpu())
    return torch.cat(out).numpy().astype(np.float32)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from trainwell._errors import TrainwellError
    from trainwell._files import atomic_write, atomic_write_text

    out = Path(args.out)
    if out.suffix != ".npy":
        raise TrainwellError(f"--out {args.out!r} must end in .npy (numpy adds it otherwise).",
                             fix=f"--out {out.with_suffix('.npy')}")
    model, data = load_embedder(Path(args.run_dir), args.checkpoint, args.device, typed_code(args))
    paths = image_paths(args.files)
    emb = embed_images(model, data, paths, args.batch_size)
    listing = out.with_suffix(".files.txt")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, lambda f: np.save(f, emb))
        atomic_write_text(listing, "".join(f"{p}\n" for p in paths))
    except OSError as e:
        from trainwell.engine.run_folder import cannot_write

        raise cannot_write(out, e, fix="choose an --out in a folder you can write to") from None
    print(f"wrote {emb.shape[0]} x {emb.shape[1]} float32 embeddings to {out}; row i is line i of {listing}")
    return 0
