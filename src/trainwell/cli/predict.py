"""``trainwell predict RUN_DIR FILE...``: top-k classes for image files, CSV rows or texts, from the best
checkpoint, or from a file ``trainwell export`` wrote (``trainwell predict model.onnx FILE...``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from trainwell.cli.code_options import add_code_options, typed_code

# The prediction table's words, per language.
_WORDS: dict[str, tuple[str, str]] = {  # key: (English, Chinese)
    "title": ("Predictions ({source})", "预测结果（{source}）"),
    "input": ("input", "输入"),
    "prediction": ("prediction", "预测"),
    "probability": ("probability", "概率"),
    "next": ("next best", "其次"),
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("predict", help="predict classes for image files or a CSV with a trained run",
                              description="Loads the run's best checkpoint, applies the training preprocessing "
                                          "(same normalization, size, channels, feature columns) and prints the "
                                          "top-k classes with probabilities.")
    p.add_argument("run_dir", metavar="RUN_DIR",
                   help="a run folder, or a file `trainwell export` wrote (.onnx, .pt, .safetensors; a .pt2 file is "
                        "never loaded: see docs/SECURITY.md)")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="image files, or CSV files with the training feature columns; for a text run: "
                        "texts, or .txt files with one text per line")
    p.add_argument("--top-k", type=int, default=3, help="classes shown for each input, at least 1 (default 3)")
    p.add_argument("--checkpoint", choices=["best", "last"], default="best")
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--lang", choices=["en", "zh"], help="language of the table (default: from the locale)")
    add_code_options(p)
    p.set_defaults(func=run)


def load_predictor(run_dir: Path, checkpoint: str = "best", device: str = "cpu",
                   typed: dict[str, str] | None = None) -> tuple[Any, dict[str, Any]]:
    """The run's model (eval mode) and its data payload (preprocess, class names); ``typed`` names the
    user's own model / tokenizer again (see :mod:`trainwell._trust`)."""
    from trainwell.engine.device import resolve_device
    from trainwell.export.model import load_run_model

    model, data, _ = load_run_model(run_dir, checkpoint, typed)
    return model.to(resolve_device(device)), data


def _load(args: argparse.Namespace) -> tuple[Any, dict[str, Any], str, str]:
    """The model to call (a run's, or an exported file's on the CPU), the data payload, the run's task
    and a title naming where the model came from."""
    target = Path(args.run_dir)
    if target.is_file():
        from trainwell._errors import TrainwellError
        from trainwell.export.export import load_exported

        if args.device != "cpu":
            raise TrainwellError(f"An exported file predicts on the CPU; --device {args.device} applies to "
                                 "run folders.", fix="leave out --device, or predict with the run folder")
        runner, metadata = load_exported(target, typed_code(args))
        return runner, metadata["payload"], metadata["task"], f"{metadata['format']} export {target}"
    model, data = load_predictor(target, args.checkpoint, args.device, typed_code(args))
    return model, data, data.get("task", "classification"), f"{args.checkpoint} checkpoint of {target}"


def input_labels(paths: list[str]) -> list[str]:
    """What tells the files apart, for a table: the shortest ending of their paths (the file name, or a
    folder and the file name, ...) that differs between them all; the paths as typed when none does."""
    parts = [Path(p).parts for p in paths]
    for depth in range(1, max(map(len, parts), default=0) + 1):
        labels = [str(Path(*p[-depth:])) for p in parts]
        if len(set(labels)) == len(labels):
            return labels
    return list(paths)


def _cut_start(text: str, width: int) -> str:
    """``text`` cut at its start to ``width`` terminal cells, with … where it was cut."""
    from rich.cells import cell_len

    while cell_len(text) > width and len(text) > 1:
        text = "…" + text[2:] if text.startswith("…") else "…" + text[1:]
    return text


def _inputs(files: list[Path], pre: Any) -> tuple[Any, list[str], list[str], dict[str, list[str]]]:
    """Stack every input into one normalized batch, with a name for each (file, or file:line), its label for
    the table (see :func:`input_labels`), and warnings for the images that look unlike the training data."""
    import torch

    from trainwell._errors import DataError

    rows, names, labels, warnings = [], [], [], {}
    shown = dict(zip(map(str, files), input_labels(list(map(str, files)))))
    for path in files:
        if not path.is_file():
            raise DataError(f"No file {str(path)!r} to predict.", fix="check the path")
        if pre.kind == "tabular":
            from trainwell.data.tabular import read_feature_csv

            x, _, _, _ = read_feature_csv(path, None, pre.features)
            rows.append(pre(torch.from_numpy(x)))
            names += [f"{path}:{i + 2}" for i in range(len(x))]
            labels += [f"{shown[str(path)]}:{i + 2}" for i in range(len(x))]
        else:
            from trainwell.data.input_check import file_size, image_warnings

            from trainwell.data.geometry import ImageGeometry

            image = read_image(path, pre.input_shape[0], ImageGeometry.of(pre))  # (C, H, W) in [0, 1], as trained
            warnings[str(path)] = image_warnings(str(path), image, pre, file_size(path))
            rows.append(pre.normalize(image.unsqueeze(0)))
            names.append(str(path))
            labels.append(shown[str(path)])
    return torch.cat(rows), names, labels, warnings


def read_image(path: Path, channels: int, size: Any) -> Any:
    """An image file named on the command line as a (C, H, W) tensor in [0, 1], at ``size`` (an ``ImageGeometry``,
    the run's resize and crop, or a (H, W) size); an image whose pixel count is past Pillow's decompression-bomb
    limit is one clear error."""
    from PIL import Image

    from trainwell._errors import DataError
    from trainwell.data.folder import load_image

    try:
        return load_image(path, channels, size)
    except Image.DecompressionBombError as e:
        raise DataError(f"Image {str(path)!r} is too large to decode safely: {e}",
                        fix="leave this file out, or give a smaller copy of the image") from None


def _texts(args: list[str]) -> tuple[list[str], list[str]]:
    """Each argument is a text, or a .txt file of texts (one per line, empty lines skipped)."""
    from trainwell._errors import DataError
    from trainwell.data.text_files import read_utf8

    texts, names = [], []
    for arg in args:
        path = Path(arg)
        if arg.endswith(".txt") and "\n" not in arg:
            if not path.is_file():
                raise DataError(f"No file {arg!r} to predict.", fix="check the path, or leave off .txt for a text")
            for line, text in enumerate(read_utf8(path, "predict").splitlines(), start=1):
                if text.strip():
                    texts.append(text.strip())
                    names.append(f"{arg}:{line}")
        elif arg.strip():
            texts.append(arg.strip())
            names.append(arg.strip() if len(arg.strip()) <= 40 else arg.strip()[:39] + "…")
    if not texts:
        raise DataError("No text to predict: every argument and line is empty.")
    return texts, names


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    import torch

    from trainwell.data import Preprocess
    from trainwell.tasks.classification import topk

    if args.top_k < 1:
        from trainwell._errors import TrainwellError

        raise TrainwellError(f"--top-k {args.top_k}: it is how many classes to show for each input, at least 1.",
                             fix="e.g. --top-k 3")
    model, data, task, source = _load(args)
    if task == "embedding":
        from trainwell._errors import TrainwellError

        run = args.run_dir if Path(args.run_dir).is_dir() else "RUN_DIR"  # embed and verify read run folders
        raise TrainwellError(f"{args.run_dir} is an embedding model: it outputs vectors, not classes.",
                             fix=f"use `trainwell embed {run} FILES... --out emb.npy` or "
                                 f"`trainwell verify {run} A.png B.png`")
    device = next(model.parameters()).device if isinstance(model, torch.nn.Module) else torch.device("cpu")
    warnings: dict[str, list[str]] = {}  # input name -> what looks unlike the training data
    if task == "text":
        from trainwell.tasks.text import encode_texts

        texts, names = _texts(args.files)
        labels = texts  # the texts themselves, cut at their end to fit the table
        tokens, lengths = encode_texts(data, texts)
        with torch.inference_mode():
            logits = model(tokens.to(device), lengths)
    else:
        pre = Preprocess.from_dict(data["preprocess"])
        x, names, labels, warnings = _inputs([Path(f) for f in args.files], pre)
        with torch.inference_mode():
            logits = model(x.to(device))
    results = [{"input": n, **({"text": text} if task == "text" else {}), "top": t, "warnings": warnings.get(n, [])}
               for n, text, t in zip(names, labels, topk(logits, data["class_names"], args.top_k))]
    for r in results:  # on stderr, so they show with --json too without spoiling its output
        for warning in r["warnings"]:
            print(f"trainwell: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return 0
    from trainwell._lang import detect_lang

    _print_table(results, labels, text=task == "text", source=source, lang=detect_lang(args.lang))
    return 0


def _print_table(results: list[dict[str, Any]], labels: list[str], *, text: bool, source: str, lang: str) -> None:
    """The predictions as a table that fits the terminal: each input on one line, by its label (a text cut at
    its end, a path at its start, where they are alike), the other columns wrapping."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from trainwell._lang import say

    heads = [say(_WORDS, lang, key) for key in ("input", "prediction", "probability", "next")]
    rows = [(" ".join(label.split()) if text else label, r["top"][0]["class"],
             f"{100 * r['top'][0]['probability']:.1f}%",
             ", ".join(f"{t['class']} {100 * t['probability']:.1f}%" for t in r["top"][1:]))
            for r, label in zip(results, labels)]
    console = Console()
    widths = [max(cell_len(row[i]) for row in [tuple(heads), *rows])
              for i in range(4)]
    # The room the other columns leave (next best wrapping from 20 cells), never below 16 cells.
    room = max(console.width - 13 - widths[1] - widths[2] - min(widths[3], 20), 16)  # 13: borders and padding
    if not text:
        rows = [(_cut_start(row[0], room), *row[1:]) for row in rows]
    table = Table(title=say(_WORDS, lang, "title", source=source))
    table.add_column(heads[0], no_wrap=True, overflow="ellipsis", min_width=min(widths[0], room), max_width=room)
    table.add_column(heads[1], style="bold", overflow="fold")
    table.add_column(heads[2], justify="right", no_wrap=True)
    table.add_column(heads[3], overflow="fold")
    for row in rows:
        table.add_row(*map(escape, row))
    console.print(table)
