"""``trainwell export RUN_DIR --format onnx|torchscript|exported|safetensors``: a deployable file, checked
against the PyTorch model on the run's own test samples before it is written."""

from __future__ import annotations

import argparse
from pathlib import Path

from trainwell.cli.code_options import add_code_options, typed_code

FORMATS = ("onnx", "torchscript", "exported", "safetensors")  # trainwell.export.FORMATS, without importing torch


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "export", help="export a trained run to ONNX, TorchScript, torch.export or safetensors",
        description="Writes the run's model in the chosen format, with its preprocessing and classes inside "
                    "the file and in export.json beside it. Before anything is written, the exported model "
                    "and the PyTorch model run on up to 256 samples of the run's test split (and on batches "
                    "of other sizes): beyond 1e-4 absolute difference or one different top-1 class, nothing "
                    "is written and the command fails. `trainwell predict FILE ...` then predicts from the "
                    "file alone (ONNX, TorchScript, safetensors; a .pt2 file is for PyTorch, and predict never "
                    "loads one: see docs/SECURITY.md).")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--format", choices=FORMATS, default="onnx",
                   help="onnx (onnxruntime), torchscript (.pt), exported (torch.export .pt2), "
                        "safetensors (weights alone; the config beside them). Default: onnx")
    p.add_argument("--out", metavar="FILE", help="where to write it (default RUN_DIR/export/FORMAT/model.EXT); "
                                                 "an existing file is replaced only with --force, and a run "
                                                 "folder's own files never")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--best", dest="checkpoint", action="store_const", const="best",
                       help="the best checkpoint (default)")
    which.add_argument("--last", dest="checkpoint", action="store_const", const="last",
                       help="the last checkpoint")
    add_code_options(p)
    p.set_defaults(func=run, checkpoint="best")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from trainwell.export.export import export_run

    console = Console(stderr=True, highlight=False)
    done = export_run(Path(args.run_dir), args.format, Path(args.out) if args.out else None, args.checkpoint,
                      say=lambda line: console.print(f"[dim]{line}[/]"), typed=typed_code(args), force=args.force)
    console.print(f"parity: {done.parity.describe()}", soft_wrap=True)
    print(f"{done.path} ({done.format}, {done.size_bytes / 1e6:.2f} MB, {done.seconds:.1f} s); "
          f"preprocessing and parity in {done.sidecar}")
    return 0
