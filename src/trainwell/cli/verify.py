"""``trainwell verify RUN_DIR A.png B.png``: same person or not, at the threshold chosen during training."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from trainwell.cli.code_options import add_code_options, typed_code


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("verify", help="decide whether two images show the same identity (embedding run)",
                              description="Embeds both images with the run's best checkpoint and compares their cosine "
                                          "similarity with the threshold chosen on validation pairs during training.")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("a", metavar="A", help="first image")
    p.add_argument("b", metavar="B", help="second image")
    p.add_argument("--threshold", type=float, help="override the stored threshold (cosine similarity, -1..1)")
    p.add_argument("--checkpoint", choices=["best", "last"], default="best")
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_code_options(p)
    p.set_defaults(func=run)


def stored_threshold(run_dir: Path, data: dict[str, Any]) -> float:
    """The threshold saved in the checkpoint (or summary.json) at the end of training."""
    from trainwell._errors import TrainwellError

    if "verification" in data:
        return float(data["verification"]["threshold"])
    summary = run_dir / "summary.json"
    if summary.is_file():
        value = json.loads(summary.read_text(encoding="utf-8")).get("threshold")
        if value is not None:
            return float(value)
    raise TrainwellError(f"{run_dir} has no verification threshold: the run stopped before its final evaluation.",
                         fix=f"finish it with `trainwell train --resume {run_dir}`, or give one: --threshold 0.5")


def run(args: argparse.Namespace) -> int:
    from trainwell.cli.embed import embed_images, image_paths, load_embedder

    run_dir = Path(args.run_dir)
    model, data = load_embedder(run_dir, args.checkpoint, args.device, typed_code(args))
    threshold = args.threshold if args.threshold is not None else stored_threshold(run_dir, data)
    paths = image_paths([args.a, args.b])
    emb = embed_images(model, data, paths)
    similarity = float((emb[0] * emb[1]).sum())  # rows are unit length: the dot product is the cosine
    same = similarity >= threshold
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, "similarity": similarity, "threshold": threshold,
                          "same": same}, indent=2))
        return 0
    verdict = "SAME identity" if same else "DIFFERENT identities"
    print(f"{verdict}: cosine similarity {similarity:.4f} {'>=' if same else '<'} threshold {threshold:.4f}")
    return 0
