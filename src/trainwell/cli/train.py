"""``trainwell train``: a complete, correct training run with the guide's defaults."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

from trainwell.cli.config_options import add_config_options

# What `trainwell train` prints, per language.
_WORDS: dict[str, tuple[str, str]] = {  # key: (English, Chinese)
    "resuming": ("Resuming [bold]{run_dir}[/] from epoch {epoch}, step {step} (of {epochs} epochs)",
                 "继续训练 [bold]{run_dir}[/]：从第 {epoch} 轮、第 {step} 步开始（共 {epochs} 轮）"),
    "over": ("; it stopped before its first checkpoint, so training starts over", "；它在第一个检查点之前就停止了，所以从头开始训练"),
    "data": ("data: {name} ({source}), split {sizes}, split seed {seed}; device {device}, {threads}",
             "数据：{name}（{source}），划分 {sizes}，划分种子 {seed}；设备 {device}，{threads}"),
    "split": ("{part} {n}", "{part} {n}"),
    "thread": ("{n} CPU thread", "{n} 个 CPU 线程"),
    "threads": ("{n} CPU threads", "{n} 个 CPU 线程"),
    "mapped": ("labels mapped to class indices: {pairs}", "标签映射为类别编号：{pairs}"),
    "skipped": ("[yellow]skipped {n} unreadable image(s)[/]", "[yellow]跳过了 {n} 张无法读取的图片[/]"),
    "interrupted": ("trainwell: interrupted. The run folder is kept; continue it with:\n  {command}",
                    "trainwell：已中断。运行文件夹已保留；用下面的命令继续：\n  {command}"),
    "result": ("Result", "结果"),
    "test_auc": ("test ROC AUC", "测试 ROC AUC"),
    "test_tar": ("test TAR @ FAR 1%", "测试 TAR @ FAR 1%"),
    "test_verify": ("test verification accuracy", "测试验证准确率"),
    "pixel_auc": ("raw-pixel baseline AUC", "原始像素基线 AUC"),
    "test_acc": ("test accuracy", "测试准确率"),
    "val_acc": ("val accuracy (best epoch)", "验证准确率（最佳轮次）"),
    "best_epoch": ("best epoch", "最佳轮次"),
    "time": ("training time", "训练时间"),
    "time_value": ("{train:.1f} s (wall {wall:.1f} s)", "{train:.1f} 秒（总耗时 {wall:.1f} 秒）"),
    "throughput": ("throughput", "吞吐量"),
    "sps": ("{sps:,.0f} samples/s", "每秒 {sps:,.0f} 个样本"),
    "parameters": ("parameters", "参数量"),
    "folder": ("Run folder (report.html, metrics.csv, checkpoints/):",
               "运行文件夹（report.html、metrics.csv、checkpoints/）："),
}


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
    p.add_argument("--lang", choices=["en", "zh"], help="language of the messages and the doctor's findings "
                   "(default: from the locale)")
    p.add_argument("--show-config", action="store_true",
                   help="show every config value at the start (default: the ones that differ from the defaults)")
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
        from trainwell.cli.open_run import shared_run

        opened = shared_run(args, console)
        if opened is None:
            return 0
        config, run_dir, existed, resuming = opened
    if resuming:  # the config was read from the folder's config.yaml
        _check_code(config, args, run_dir)
    from trainwell.app.run import train_from_config

    import torch

    from trainwell._lang import detect_lang, say

    lang = detect_lang(args.lang)
    words = partial(say, _WORDS, lang)

    def data_read(bundle: Any) -> None:  # the data is good: the run starts with this config
        if not resuming:
            from trainwell.cli.open_run import show_config

            show_config(console, config, run_dir, full=args.show_config, lang=lang)

    def ready(trainer: Any, bundle: Any) -> None:
        if resuming and (args.resume or trainer.state.step):
            st = trainer.state
            console.print(words("resuming", run_dir=run_dir, epoch=st.epoch + 1, step=st.step,
                                epochs=config.train.epochs) + ("" if st.step else words("over")), highlight=False)
        sizes = bundle.info.get("sizes", {})
        n = torch.get_num_threads()
        console.print(words("data", name=config.data.name, source=bundle.info.get("source"),
                            sizes=" / ".join(words("split", part=k, n=v) for k, v in sizes.items()),
                            seed=bundle.info.get("split_seed"), device=trainer.device,
                            threads=words("thread" if n == 1 else "threads", n=n)),
                      highlight=False, soft_wrap=True)
        mapping = bundle.info.get("label_mapping")
        if mapping:
            console.print(words("mapped", pairs=", ".join(f"{k} -> {v}" for k, v in list(mapping.items())[:20])),
                          highlight=False)
        for note in bundle.info.get("notes", []):
            console.print(note, highlight=False, soft_wrap=True)
        if bundle.info.get("skipped_unreadable"):
            console.print(words("skipped", n=bundle.info["skipped_unreadable"]))

    try:
        result = train_from_config(config, run_dir, resume=resuming, progress=not args.no_progress,
                                   console=console, on_data=data_read, on_ready=ready, doctor=not args.no_doctor,
                                   lang=lang)
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
                print(words("interrupted", command=f"trainwell train --resume {shlex.quote(str(run_dir))}"),
                      file=sys.stderr)
            return 130
        raise
    _print_summary(console, result.summary, time.perf_counter() - started, lang)
    if env_rank() == 0:
        print(run_dir)
    return 0


def _print_summary(console: Any, summary: dict[str, Any], wall: float, lang: str = "en") -> None:
    from rich.table import Table

    from trainwell._lang import say
    from trainwell.verification.report import below_baseline

    words = partial(say, _WORDS, lang)

    def pct(v: Any) -> str:
        return "-" if v is None else f"{100 * v:.2f}%"

    table = Table(title=words("result"), show_header=False)
    if summary.get("test_auc") is not None:  # an embedding run: verification figures
        table.add_row(words("test_auc"), f"{summary['test_auc']:.4f}")
        if summary.get("test_tar_at_far1") is not None:
            table.add_row(words("test_tar"), pct(summary.get("test_tar_at_far1")))
        if summary.get("test_verify_accuracy") is not None:
            table.add_row(words("test_verify"), pct(summary.get("test_verify_accuracy")))
        if summary.get("pixel_test_auc") is not None:
            table.add_row(words("pixel_auc"), f"{summary['pixel_test_auc']:.4f}")
    else:
        table.add_row(words("test_acc"), pct(summary.get("test_accuracy")))
        table.add_row(words("val_acc"), pct(summary.get("val_accuracy")))
    table.add_row(words("best_epoch"), str(summary.get("best_epoch")))
    table.add_row(words("time"), words("time_value", train=summary.get("train_seconds", 0), wall=wall))
    sps = summary.get("samples_per_second")
    table.add_row(words("throughput"), "-" if sps is None else words("sps", sps=sps))
    table.add_row(words("parameters"), f"{summary.get('parameters', 0):,}")
    console.print(table)
    below = below_baseline(summary, lang)  # an embedding no better than its raw pixels: said last, plainly
    if below:
        console.print(below, style="bold yellow", highlight=False, markup=False, soft_wrap=True)
    console.print(words("folder"), highlight=False)
