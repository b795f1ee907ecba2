"""``trainwell train``: a complete, correct training run with the guide's defaults."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train", help="train a model (default: a CNN on the built-in mnist-5k digits)",
        description="Train with validation every epoch, checkpoints, metrics, TensorBoard and an HTML report. "
                    "Values come from: defaults < the dataset's recipe < --config < flags < --set.")
    add_config_options(p)
    p.add_argument("--resume", metavar="RUN_DIR", help="continue an interrupted run exactly where it stopped")
    p.add_argument("--checkpoint-every", type=int, metavar="STEPS", help="also save last.pt every STEPS steps")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (one line per epoch only)")
    p.add_argument("--no-doctor", action="store_true", help="do not run the doctor's checks during training")
    p.add_argument("--lang", choices=["en", "zh"], help="language of the doctor's findings (default: from the locale)")
    p.add_argument("--logger", action="append", choices=["mlflow"],
                   help="also log to MLflow: params, metrics, test figures, report.html and the folder's small files "
                        "(not the checkpoints; log.mlflow_checkpoints=true adds best.pt); needs trainwell[mlflow]")
    p.add_argument("--tracking-uri", metavar="URI", help="with --logger mlflow: the MLflow store (default: "
                   "$MLFLOW_TRACKING_URI, else sqlite:///mlruns/mlflow.db, artifacts in mlruns/)")
    p.add_argument("--nproc", type=int, metavar="N",
                   help="train in N processes on this machine (one per GPU; DDP), started by torchrun's elastic agent")
    p.add_argument("--max-restarts", type=int, default=0, metavar="K",
                   help="with --nproc: restart the whole group up to K times after a worker fails; it resumes from "
                        "the last checkpoint (use --checkpoint-every to lose less)")
    # A worker started by --nproc trains into the folder its launcher created (and resumes its last.pt).
    p.add_argument("--into", help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def add_config_options(p: argparse.ArgumentParser) -> None:
    """The options that make a run's config (shared by `train` and the doctor's preflight)."""
    p.add_argument("--data", help="dataset name, or NAME:PATH (csv:file.csv, image-folder:DIR); see `trainwell datasets`")
    p.add_argument("--task", help="classification (default), text or embedding; some datasets imply it")
    p.add_argument("--model", help="mlp, cnn, or your package.module:Class; see `trainwell models`")
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
        "train.early_stop.patience": getattr(args, "early_stop", None),
        "log.loggers": getattr(args, "logger", None), "log.mlflow_uri": getattr(args, "tracking_uri", None),
    }


def run(args: argparse.Namespace) -> int:
    from trainwell.machine import under_torchrun

    if under_torchrun():
        from trainwell.cli.launch import worker

        return worker(args, _train)
    if args.nproc is not None:
        from trainwell.cli.launch import launch

        return launch(args)
    from trainwell._errors import TrainwellError

    if args.into:
        raise TrainwellError("--into is for the workers that `trainwell train --nproc` starts.",
                             fix="use --out DIR for a new run, or --resume DIR to continue one")
    if args.max_restarts:
        raise TrainwellError("--max-restarts restarts the workers that --nproc starts; a single process has none.",
                             fix="add --nproc N (under plain torchrun, give torchrun its own --max-restarts)")
    return _train(args)


def open_run(args: argparse.Namespace, console: Any) -> tuple[Any, Path, bool] | None:
    """The run's config and folder from the options: a new folder (``--out`` or a fresh name), or the folder
    ``--resume`` continues. Returns (config, folder, whether ``--out`` existed already), or None for a finished
    run (after saying so)."""
    from trainwell._errors import TrainwellError
    from trainwell.app.configure import resolve
    from trainwell.config import load_run_config

    if args.resume:
        from trainwell.engine.run_folder import check_run_dir

        run_dir = check_run_dir(Path(args.resume), checkpoint=False)
        code = ("model.name", "text.tokenizer")  # may be given again, equal to the saved ones (docs/SECURITY.md)
        given = {k: v for k, v in config_flags(args).items() if v is not None and k not in code}
        if given or args.config or args.set:
            raise TrainwellError("--resume continues a run with its saved config.yaml; other options cannot change it.",
                                 fix=f"run `trainwell train --resume {run_dir}` alone, or start a new run")
        from trainwell.engine.run_folder import hold_run_dir

        hold_run_dir(run_dir, say=lambda text: console.print(text, highlight=False, markup=False, soft_wrap=True))
        config = load_run_config(run_dir)
        _same_code(config, args, run_dir)
        from trainwell.results.folder import set_aside_unreadable

        set_aside_unreadable(run_dir, say=lambda text: console.print(text, highlight=False, markup=False,
                                                                     soft_wrap=True))
        if _finished(console, run_dir, config.train.epochs):
            from trainwell.app.complete import complete_finished_run

            complete_finished_run(run_dir, say=lambda text: console.print(text, highlight=False, markup=False,
                                                                          soft_wrap=True))
            print(run_dir)
            return None
        return config, run_dir, True
    from trainwell.engine.run_folder import default_name, new_run_dir

    config = resolve(file=Path(args.config) if args.config else None, flags=config_flags(args), sets=args.set)
    existed = config.out is not None and Path(config.out).expanduser().is_dir()
    run_dir = new_run_dir(config.out, config.name or default_name(config.data.name, config.model.name, config.task))
    _print_config(console, config)
    return config, run_dir, existed


def _same_code(config: Any, args: argparse.Namespace, run_dir: Path) -> None:
    """With ``--resume``, ``--model`` / ``--tokenizer`` name the run's own code again; they cannot change it."""
    from trainwell._errors import TrainwellError
    from trainwell._trust import CODE_KEYS, typed_names
    from trainwell.config import get_dotted

    for key, name in typed_names(args.model, getattr(args, "tokenizer", None)).items():
        saved = get_dotted(config.to_dict(), key, None)
        if name != saved:
            raise TrainwellError(f"--resume continues a run with its saved config.yaml, whose {key} is {saved!r}; "
                                 f"{CODE_KEYS[key].option} {name} cannot change it.",
                                 fix=f"leave out {CODE_KEYS[key].option}, or give it exactly as saved")


def _check_code(config: Any, args: argparse.Namespace, run_dir: Path) -> None:
    """A run folder's config.yaml may not choose code: its own model or tokenizer is named on the command line."""
    from trainwell._trust import check_file_names, code_names, typed_names

    typed = typed_names(args.model, getattr(args, "tokenizer", None), args.set)
    check_file_names(code_names(config.to_dict()), run_dir / "config.yaml", typed)


def _train(args: argparse.Namespace) -> int:
    """Train in this process: alone, or as one worker of a torchrun group (rank 0 prints and writes)."""
    import time

    from rich.console import Console

    from trainwell.machine import env_rank

    started = time.perf_counter()
    console = Console(stderr=True, quiet=env_rank() != 0)
    if args.into:  # a worker of --nproc: the launcher created the folder and saved the config
        from trainwell.config import load_run_config

        from trainwell.engine.run_folder import hold_run_dir

        run_dir = hold_run_dir(Path(args.into))  # the launcher holds the lock; its workers are its group
        config, existed, resuming = load_run_config(run_dir), True, True
    else:
        from trainwell.cli.launch import shared_run

        opened = shared_run(args, console, open_run)
        if opened is None:
            return 0
        config, run_dir, existed, resuming = opened
    if resuming:  # the config was read from the folder's config.yaml
        _check_code(config, args, run_dir)
    from trainwell.app.run import train_from_config

    import torch

    def ready(trainer: Any, bundle: Any) -> None:
        if resuming and (args.resume or trainer.state.step):
            st = trainer.state
            console.print(f"Resuming [bold]{run_dir}[/] from epoch {st.epoch + 1}, step {st.step} "
                          f"(of {config.train.epochs} epochs)"
                          + ("; it stopped before its first checkpoint, so training starts over" if not st.step else ""),
                          highlight=False)
        sizes = bundle.info.get("sizes", {})
        console.print(f"data: {config.data.name} ({bundle.info.get('source')}), split "
                      + " / ".join(f"{k} {v}" for k, v in sizes.items())
                      + f", split seed {bundle.info.get('split_seed')}; device {trainer.device}, "
                      + _threads(torch.get_num_threads()), highlight=False,
                      soft_wrap=True)
        mapping = bundle.info.get("label_mapping")
        if mapping:
            console.print("labels mapped to class indices: "
                          + ", ".join(f"{k} -> {v}" for k, v in list(mapping.items())[:20]), highlight=False)
        for note in bundle.info.get("notes", []):
            console.print(note, highlight=False, soft_wrap=True)
        if bundle.info.get("skipped_unreadable"):
            console.print(f"[yellow]skipped {bundle.info['skipped_unreadable']} unreadable image(s)[/]")

    try:
        result = train_from_config(config, run_dir, resume=resuming, progress=not args.no_progress,
                                   console=console, on_ready=ready, doctor=not args.no_doctor, lang=args.lang)
    except BaseException as e:
        interrupted = isinstance(e, KeyboardInterrupt)
        from trainwell.engine.run_folder import discard_unfinished, write_failed_in_run

        failed = write_failed_in_run(run_dir, e) if env_rank() == 0 else None  # a full disk: what is kept, how on
        if not resuming and env_rank() == 0:
            discard_unfinished(run_dir, existed, interrupted=interrupted, keep_config=failed is not None)
        if failed is not None:
            raise failed from e
        if interrupted and (run_dir / "config.yaml").is_file():
            import shlex
            import sys

            if not args.into and env_rank() == 0:  # a --nproc launcher says it once for all its workers
                print(f"trainwell: interrupted. The run folder is kept; continue it with:\n"
                      f"  trainwell train --resume {shlex.quote(str(run_dir))}", file=sys.stderr)
            return 130
        raise
    _print_summary(console, result.summary, time.perf_counter() - started)
    if env_rank() == 0:
        print(run_dir)
    return 0


def _finished(console: Any, run_dir: Path, epochs: int) -> bool:
    """A run whose summary.json records all its epochs (or an early stop) has nothing left to resume: say so."""
    from trainwell.results.folder import read_summary

    summary = read_summary(run_dir) or {}
    done = summary.get("epochs")
    if summary.get("stopped_early"):
        trained = f"it stopped early after epoch {summary.get('stopped_epoch')}"
    elif not isinstance(done, int) or done < epochs:
        return False
    else:
        trained = f"all {epochs} epochs trained"
    console.print(f"{run_dir} is finished: {trained}, results in summary.json and report.html; "
                  "nothing to resume. To train longer, start a new run (e.g. with --epochs).", highlight=False)
    return True


def _threads(n: int) -> str:
    return f"{n} CPU thread{'' if n == 1 else 's'}"


def _print_config(console: Any, config: Any) -> None:
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    # Sections as blocks, lists on one line: short enough to read at a glance.
    Dumper.add_representer(list, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
    shown = config.to_dict()
    for section in ("text", "embedding"):  # another task's settings are saved in config.yaml, not shown
        if config.task != section:
            shown.pop(section, None)
    text = yaml.dump(shown, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=200)
    console.print("[bold]Resolved config[/] (saved as config.yaml):", highlight=False)
    console.print(text.rstrip(), highlight=False, markup=False, soft_wrap=True)


def _print_summary(console: Any, summary: dict[str, Any], wall: float) -> None:
    from rich.table import Table

    def pct(v: Any) -> str:
        return "-" if v is None else f"{100 * v:.2f}%"

    table = Table(title="Result", show_header=False)
    if summary.get("test_auc") is not None:  # an embedding run: verification figures
        table.add_row("test ROC AUC", f"{summary['test_auc']:.4f}")
        if summary.get("test_tar_at_far1") is not None:
            table.add_row("test TAR @ FAR 1%", pct(summary.get("test_tar_at_far1")))
        if summary.get("test_verify_accuracy") is not None:
            table.add_row("test verification accuracy", pct(summary.get("test_verify_accuracy")))
        if summary.get("pixel_test_auc") is not None:
            table.add_row("raw-pixel baseline AUC", f"{summary['pixel_test_auc']:.4f}")
    else:
        table.add_row("test accuracy", pct(summary.get("test_accuracy")))
        table.add_row("val accuracy (best epoch)", pct(summary.get("val_accuracy")))
    table.add_row("best epoch", str(summary.get("best_epoch")))
    table.add_row("training time", f"{summary.get('train_seconds', 0):.1f} s (wall {wall:.1f} s)")
    sps = summary.get("samples_per_second")
    table.add_row("throughput", "-" if sps is None else f"{sps:,.0f} samples/s")
    table.add_row("parameters", f"{summary.get('parameters', 0):,}")
    console.print(table)
    console.print("Run folder (report.html, metrics.csv, checkpoints/):", highlight=False)
