"""``trainwell predict RUN_DIR FILE...``: top-k classes for image files or CSV rows, from the best checkpoint."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("predict", help="predict classes for image files or a CSV with a trained run",
                              description="Loads the run's best checkpoint, applies the training preprocessing "
                                          "(same normalization, size, channels, feature columns) and prints the "
                                          "top-k classes with probabilities.")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("files", nargs="+", metavar="FILE", help="image files, or CSV files with the training feature columns")
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--checkpoint", choices=["best", "last"], default="best")
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def load_predictor(run_dir: Path, checkpoint: str = "best", device: str = "cpu") -> tuple[Any, dict[str, Any]]:
    """The run's model (eval mode) and its data payload (preprocess, class names)."""
    from trainwell.config import ModelConfig
    from trainwell.data import Preprocess
    from trainwell.engine.checkpoint import load_checkpoint
    from trainwell.engine.device import resolve_device
    from trainwell.engine.run_folder import check_run_dir
    from trainwell.models import build_model

    ckpt = load_checkpoint(check_run_dir(run_dir) / "checkpoints" / f"{checkpoint}.pt")
    data = ckpt["data"]
    pre = Preprocess.from_dict(data["preprocess"])
    model = build_model(ModelConfig.model_validate(ckpt["config"]["model"]), tuple(pre.input_shape), data["num_classes"])
    model.load_state_dict(ckpt["model"])
    model.to(resolve_device(device)).eval()
    return model, data


def _inputs(files: list[Path], pre: Any) -> tuple[Any, list[str]]:
    """Stack every input into one normalized batch, with a label naming each (file, or file:line)."""
    import torch

    from trainwell._errors import DataError

    rows, names = [], []
    for path in files:
        if not path.is_file():
            raise DataError(f"No file {str(path)!r} to predict.", fix="check the path")
        if pre.kind == "tabular":
            from trainwell.data.tabular import read_feature_csv

            x, _, _, _ = read_feature_csv(path, None, pre.features)
            rows.append(pre(torch.from_numpy(x)))
            names += [f"{path}:{i + 2}" for i in range(len(x))]
        else:
            from trainwell.data.folder import load_image

            channels, h, w = pre.input_shape
            rows.append(pre.normalize(load_image(path, channels, (h, w)).unsqueeze(0)))  # (1, C, H, W) in [0, 1]
            names.append(str(path))
    return torch.cat(rows), names


def run(args: argparse.Namespace) -> int:
    import json

    import torch

    from trainwell.data import Preprocess
    from trainwell.tasks.classification import topk

    model, data = load_predictor(Path(args.run_dir), args.checkpoint, args.device)
    pre = Preprocess.from_dict(data["preprocess"])
    x, names = _inputs([Path(f) for f in args.files], pre)
    device = next(model.parameters()).device
    with torch.inference_mode():
        logits = model(x.to(device))
    results = [{"input": n, "top": t} for n, t in zip(names, topk(logits, data["class_names"], max(1, args.top_k)))]
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Predictions ({args.checkpoint} checkpoint of {args.run_dir})")
    table.add_column("input")
    table.add_column("prediction", style="bold")
    table.add_column("probability", justify="right")
    table.add_column("next best")
    for r in results:
        first, rest = r["top"][0], r["top"][1:]
        table.add_row(r["input"], first["class"], f"{100 * first['probability']:.1f}%",
                      ", ".join(f"{t['class']} {100 * t['probability']:.1f}%" for t in rest))
    Console().print(table)
    return 0
