"""The options that set a run's configuration (``train``, ``doctor run``'s preflight, ``lr-find``), and the config
keys they set."""

from __future__ import annotations

import argparse
from typing import Any


def add_config_options(p: argparse.ArgumentParser) -> None:
    """The options that make a run's config (shared by `train` and the doctor's preflight)."""
    p.add_argument("--data", help="dataset name, or NAME:PATH (csv:file.csv, image-folder:DIR); see `trainwell datasets`")
    p.add_argument("--task", help="classification (default), text or embedding; some datasets imply it")
    p.add_argument("--model", help="mlp, cnn, torchvision:NAME, timm:NAME, hf:NAME_OR_PATH (text), or your "
                                   "package.module:Class; see `trainwell models`")
    p.add_argument("--pretrained", metavar="PATH", nargs="?", const=True,
                   help="start from pretrained weights: alone, the published weights of a torchvision: / timm: / hf: "
                        "model; with a path, a trainwell run folder, a .safetensors / .pt / .pth state dict, or for "
                        "hf: a folder written by save_pretrained. The "
                        "classification head is replaced for this data's classes (docs/TRANSFER.md)")
    p.add_argument("--tokenizer", help="text: char, word, or your package.module:function (text.tokenizer)")
    p.add_argument("--epochs", type=int)
    p.add_argument("--batch-size", type=_or_auto(int), metavar="N|auto",
                   help="the global batch: the samples of one optimizer step, however it is computed; auto: the "
                        "largest power of two whose step fits in GPU memory")
    p.add_argument("--lr", type=_or_auto(float), metavar="LR|auto",
                   help="learning rate (the peak rate with the onecycle scheduler); auto: run the learning-rate "
                        "finder first and train with its suggestion (see `trainwell lr-find`)")
    p.add_argument("--optimizer", help="adam, adamw or sgd")
    p.add_argument("--seed", type=int)
    p.add_argument("--device", help="auto (default), cpu, cuda, cuda:N or mps")
    p.add_argument("--threads", type=int, metavar="N",
                   help="CPU threads for torch's operations (default: the usable cores / the processes on this machine; "
                        "use 1 when other programs keep the CPUs busy)")
    from trainwell._spread import EXCHANGE_TIMEOUT_S, PRECISIONS, STRATEGIES

    p.add_argument("--precision", choices=PRECISIONS,
                   help="32 (default); bf16-mixed or 16-mixed run forward and loss under torch.autocast "
                        "(16-mixed with a gradient scaler)")
    p.add_argument("--accumulate", type=int, metavar="N",
                   help="compute each batch in N micro-batches of batch-size/N (same training, less memory)")
    p.add_argument("--compile", action="store_true", default=None, help="run the model through torch.compile")
    p.add_argument("--strategy", choices=STRATEGIES,
                   help="several processes: auto (DDP, the default) or fsdp (each process holds a shard of the "
                        "model, for models bigger than one device; see docs/SCALE.md)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="several processes: how long an exchange between them may wait before the group stops "
                        f"with an error naming the rank (default {EXCHANGE_TIMEOUT_S:g})")
    p.add_argument("--early-stop", type=int, metavar="PATIENCE",
                   help="stop after PATIENCE epochs in a row without improvement of the monitored value "
                        "(train.monitor; set train.early_stop.min_delta for the smallest change that counts); "
                        "the run still finishes (test on best.pt, report)")
    p.add_argument("--out", help="run folder to create (default: runs/<data>-<model>-<time>, the task after the data "
                   "when it is not classification)")
    p.add_argument("--config", metavar="FILE.yaml", help="a YAML file of config values")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="set any config field, e.g. --set train.scheduler=cosine --set model.dropout=0.3")


def _or_auto(kind: type) -> Any:
    """An argparse type: a number of ``kind``, or the word auto."""

    def parse(text: str) -> Any:
        return "auto" if text == "auto" else kind(text)

    parse.__name__ = kind.__name__  # argparse names the type in its error: "invalid float value: 'x'"
    return parse


def config_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "task": getattr(args, "task", None), "data.name": args.data, "model.name": args.model,
        "text.tokenizer": getattr(args, "tokenizer", None), "train.epochs": args.epochs,
        "train.batch_size": args.batch_size, "train.lr": args.lr, "train.optimizer": args.optimizer,
        "seed": args.seed, "device": args.device, "out": args.out, "train.threads": getattr(args, "threads", None),
        "train.checkpoint_every": getattr(args, "checkpoint_every", None),
        "train.precision": args.precision, "train.accumulate": args.accumulate, "train.compile": args.compile,
        "train.timeout": getattr(args, "timeout", None), "train.strategy": getattr(args, "strategy", None),
        "model.pretrained": getattr(args, "pretrained", None),
        "train.early_stop.patience": getattr(args, "early_stop", None),
        "log.loggers": getattr(args, "logger", None), "log.mlflow_uri": getattr(args, "tracking_uri", None),
    }
