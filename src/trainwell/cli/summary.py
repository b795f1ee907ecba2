"""``trainwell summary``: the per-layer table for a model and its input (the guide's "print the shapes first")."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("summary", help="per-layer output shapes and parameter counts of a model",
                              description="Build the model the way `trainwell train` would (same options) "
                                          "or load it from a run folder, and print each layer's output shape.")
    p.add_argument("run_dir", nargs="?", help="a run folder (uses its config); otherwise the options below")
    p.add_argument("--data", help="dataset that fixes the input shape and classes (default mnist-5k)")
    p.add_argument("--task", help="classification (default), text or embedding")
    p.add_argument("--model", help="mlp, cnn, lstm, gru or package.module:Class (with RUN_DIR: a run of your own "
                                   "class names it again)")
    p.add_argument("--tokenizer", help="text: char, word or package.module:function (with RUN_DIR: a run of your "
                                       "own tokenizer names it again)")
    p.add_argument("--input-shape", help="one sample's shape instead of reading data, e.g. 1,28,28 or 3,32,32")
    p.add_argument("--classes", type=int, default=10, help="number of classes with --input-shape (default 10)")
    p.add_argument("--config", metavar="FILE.yaml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _shape(text: str) -> tuple[int, ...]:
    from trainwell._errors import TrainwellError

    try:
        shape = tuple(int(v) for v in text.replace("x", ",").split(",") if v.strip())
    except ValueError:
        shape = ()
    if not shape or any(v < 1 for v in shape):
        raise TrainwellError(f"--input-shape {text!r} is not a list of positive sizes.", fix="e.g. --input-shape 1,28,28")
    return shape


def run(args: argparse.Namespace) -> int:
    import json

    import torch

    from trainwell.app.configure import resolve
    from trainwell.config import load_run_config
    from trainwell.models import build_model
    from trainwell.models.summary import render_summary, summarize, summary_dict

    if args.run_dir:
        from trainwell.engine.run_folder import check_run_dir

        from trainwell._trust import check_file_names, code_names, typed_names

        config = load_run_config(check_run_dir(Path(args.run_dir)))
        check_file_names(code_names(config.to_dict()), Path(args.run_dir) / "config.yaml",
                         typed_names(args.model, args.tokenizer, args.set))
    else:
        config = resolve(file=Path(args.config) if args.config else None,
                         flags={"task": args.task, "data.name": args.data, "model.name": args.model,
                                "text.tokenizer": args.tokenizer}, sets=args.set)
    if args.input_shape:
        shape = _shape(args.input_shape)
        model, example = build_model(config.model, shape, args.classes), torch.zeros(1, *shape)
    else:  # the task builds data and model as training would (text: the vocabulary sets the embedding size)
        from trainwell.app.preflight import first_sample, tiny_batch
        from trainwell.tasks import get_task

        task = get_task(config.task)
        bundle = task.build_data(config)
        model = task.build_model(config, bundle)
        x, _ = tiny_batch(task, config, bundle.train)
        _, eval_transform = task.transforms(config, bundle)
        example = first_sample(eval_transform(x, None) if eval_transform is not None else x)
    result = summarize(model, example)
    if args.json:
        print(json.dumps(summary_dict(result), indent=2))
    else:
        render_summary(result)
    return 0
