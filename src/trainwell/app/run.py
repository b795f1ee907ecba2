"""From a validated config to a finished run folder: data -> model -> trainer -> test -> report."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trainwell._lang import detect_lang, say
from trainwell._library_names import is_library_model
from trainwell.config import Config, save_yaml
from trainwell.data import DataBundle, TensorData
from trainwell.data.loading import EpochLoader
from trainwell.engine.callbacks import Callback
from trainwell.engine.accumulate import micro_batch_size
from trainwell.engine.checkpoint import load_checkpoint
from trainwell.engine.shards import SHARDS, last_checkpoint, load_shards, remove_leftovers
from trainwell.engine.checkpointing import Checkpointer
from trainwell.engine.compile_log import compile_messages
from trainwell.engine.device import resolve_device
from trainwell.engine.early_stop import early_stop_from
from trainwell.engine.optim import build_optimizer, build_scheduler
from trainwell.engine.run_folder import write_json
from trainwell.engine.run_lock import release
from trainwell.engine.seed import seed_everything
from trainwell.engine.strategy import Strategy
from trainwell.engine.trainer import Trainer
from trainwell.machine import (apply_threads, busy_threads, default_threads, load_average, loader_defaults, peak_memory,
                               this_machine)
from trainwell.models.memory import use_channels_last
from trainwell.tasks import Task, get_task

EVAL_BATCH = 256  # evaluation needs no gradients, so larger batches are cheap

# What a run says as it starts, per language.
_WORDS: dict[str, tuple[str, str]] = {  # key: (English, Chinese)
    "busy": ("the machine is busy: load {load:g} on {cores} core{s}; using {n} thread{ns} (--threads N to "
             "choose; a seeded run repeats exactly with the same number of threads)",
             "机器正忙：{cores} 个核心上的负载为 {load:g}；使用 {n} 个线程（用 --threads N 自行选择；"
             "线程数相同时，固定种子的运行结果完全一致）"),
    "unrecorded": ("{run_dir}/env.json records no thread count: the resumed run takes the default, {n} thread{ns}; "
                   "if the run started with another count, its results differ slightly from an uninterrupted run's "
                   "(--threads N to choose)",
                   "{run_dir}/env.json 中没有记录线程数：继续的运行使用默认的 {n} 个线程；若原先用的是别的线程数，"
                   "结果会与不中断的运行略有不同（用 --threads N 自行选择）"),
    "compile_cpu": ("--compile on a CPU: the first steps are slower while torch.compile compiles the model "
                    "(again for each new batch shape); the gains are mainly on GPUs. Its messages go to "
                    "{log}",
                    "在 CPU 上使用 --compile：torch.compile 编译模型时最初几步会更慢（每遇到新的批次形状都会重新编译）；收益主要在 GPU "
                    "上。它的消息写入 {log}"),
}


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    trainer: Trainer


def folder_callbacks(run_dir: Path, *, checkpoint_every: int | None, log_every: int,
                     extra: dict[str, Any], main: bool = True, loggers: list[Callback] | None = None,
                     release_lock: bool = False) -> list[Callback]:
    """metrics.csv, steps.csv, TensorBoard events, ``loggers`` (MLflow) and checkpoints: what every run folder gets.

    (steps.csv and the loggers come before the checkpoints: what a checkpoint's step has seen is logged before it.)
    Only the ``main`` process (rank 0) writes; the others keep just the checkpointer, which joins the exchange of
    pending losses that a checkpoint starts but writes nothing. ``release_lock``: give the folder's lock back once
    the run is complete or has failed (``trainwell.fit``, whose process goes on; the command line releases it
    as it exits).
    """
    from trainwell.report.metrics import CsvLogger, StepsCsv, TensorBoardLogger

    checkpointer = Checkpointer(run_dir / "checkpoints", every_steps=checkpoint_every, extra=extra, write=main)
    if not main:
        return [checkpointer]
    return [CsvLogger(run_dir / "metrics.csv"), StepsCsv(run_dir / "steps.csv"),
            TensorBoardLogger(run_dir / "tensorboard", log_every), *(loggers or []), checkpointer,
            *([_ReleaseLock(run_dir)] if release_lock else [])]


class _ReleaseLock(Callback):
    """Releases the run folder's lock when the run ends, or fails."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def on_exception(self, trainer: Trainer, error: BaseException) -> None:
        release(self.run_dir)

    def on_run_end(self, trainer: Trainer, summary: dict[str, Any]) -> None:
        release(self.run_dir)


def distributed_facts(strategy: Strategy) -> dict[str, Any]:
    """``world_size``, ``nodes``, ``backend`` and ``strategy`` for env.json and summary.json."""
    from trainwell.engine.distributed import facts

    spread = facts() if strategy.world_size > 1 else {"world_size": 1, "nodes": 1, "backend": None}
    return {**spread, "strategy": strategy.name}


@dataclass
class RunParts:
    """What a config builds before any training: the device and processes, the task, its data, the model and loss
    on the device (seeded initial weights), and the training loader for a given global batch."""

    config: Config
    device: torch.device
    strategy: Strategy
    task: Task
    bundle: DataBundle
    model: torch.nn.Module
    loss_fn: Any

    def loader(self, batch_size: int) -> EpochLoader:
        """The training loader of global batches of ``batch_size`` (each process's share in micro-batches)."""
        config, strategy = self.config.model_copy(deep=True), self.strategy
        config.train.batch_size = batch_size  # (a text task's length buckets are batches of it too)
        micro = micro_batch_size(batch_size, processes=strategy.world_size, accumulate=config.train.accumulate)
        return EpochLoader(self.bundle.train, batch_size=batch_size, shuffle=True, seed=config.seed,
                           micro_batch_size=micro, sharding=strategy,
                           **_loader_options(self.task, config, self.bundle.train, self.device.type == "cuda",
                                             train=True))


def prepare(config: Config, *, pretrained: bool = True, threads: int | None = None) -> RunParts:
    """Threads, seed, device and strategy, then the task's data, model and loss (on the device). With
    ``model.pretrained`` the model starts from those weights (``pretrained=False``: a resumed run, which has its
    own; the data is normalized as the pretrained run's either way). ``threads``: the count when
    ``train.threads`` leaves it to the run (None: the machine's default)."""
    from trainwell.engine.distributed import device_for, strategy_for

    apply_threads(config.train.threads if config.train.threads is not None else threads)
    seed_everything(config.seed, config.deterministic)
    device = device_for(resolve_device(config.device))
    strategy = strategy_for(device, name=config.train.strategy, sync_bn=config.model.sync_bn,
                            timeout=config.train.timeout, shard_min_share=config.train.shard_min_share)
    task = get_task(config.task)
    from trainwell.app.pretrained import apply_pretrained, folder_geometry

    sized = folder_geometry(config) if pretrained else None  # (a resumed run keeps the geometry it recorded)
    bundle = task.build_data(config)
    notes = bundle.info["notes"] = ([sized] if sized else []) + bundle.info.get("notes", [])  # said at the start
    model = task.build_model(config, bundle)
    if is_library_model(config.model.name):
        from trainwell.models.library import input_notes

        notes += input_notes(config.model.name, tuple(bundle.preprocess.input_shape))
    if config.model.pretrained:
        notes += apply_pretrained(model, bundle, config.model.pretrained, weights=pretrained, name=config.model.name)
    loss_fn = task.build_loss(config, bundle)
    model.to(device)
    use_channels_last(model, config.model.channels_last, device.type)
    loss_fn.to(device)
    return RunParts(config, device, strategy, task, bundle, model, loss_fn)


def run_threads(config: Config, run_dir: Path, *, resume: bool, lang: str = "en") -> tuple[int | None, str | None]:
    """The thread count a run takes when ``train.threads`` leaves it open, and the line that says why (or None).

    A new run takes the cores the load leaves free (:func:`trainwell.machine.busy_threads`), saying so when that
    is fewer than the default; a resumed run takes the count it started with (env.json), so it continues exactly."""
    if config.train.threads is not None:
        return None, None
    if resume:
        import json

        try:
            recorded = json.loads((run_dir / "env.json").read_text(encoding="utf-8")).get("torch_threads")
        except (OSError, ValueError, AttributeError):
            recorded = None
        if isinstance(recorded, int) and recorded >= 1:
            return recorded, None
        n = default_threads(this_machine())
        return None, say(_WORDS, lang, "unrecorded", run_dir=run_dir, n=n, ns="" if n == 1 else "s")
    machine, load = this_machine(), load_average()
    n = busy_threads(machine, load)
    if n is None:
        return None, None
    return n, say(_WORDS, lang, "busy", load=load, cores=machine.cores, s="" if machine.cores == 1 else "s", n=n,
                  ns="" if n == 1 else "s")


def train_from_config(config: Config, run_dir: Path, *, resume: bool = False, progress: bool | str = True,
                      console: Any = None, on_data: Any = None, on_ready: Any = None, doctor: bool = True,
                      lang: str | None = None) -> RunResult:
    """Train as the config says, writing everything into ``run_dir``; resume from its last.pt if asked.
    ``lang``: the language of its messages and the doctor's (``en`` / ``zh``; None: from the locale).
    ``on_data(bundle)`` is called once the data is read (before anything is written), ``on_ready(trainer, bundle)``
    before the first step (rank 0 only, both).

    ``progress``: ``True`` a progress bar and a line per epoch, ``False`` the lines only, ``"none"`` nothing."""
    from trainwell.report.mlflow_logger import import_mlflow, run_loggers, store_uri

    lang = detect_lang(lang)
    if "mlflow" in config.log.loggers:  # a missing package fails the run before any data is read
        import_mlflow(store_uri(config.log.mlflow_uri))
    threads, busy = run_threads(config, run_dir, resume=resume, lang=lang)
    parts = prepare(config, pretrained=not (resume and last_checkpoint(run_dir / "checkpoints") is not None),
                    threads=threads)
    device, strategy, task, bundle, model, loss_fn = (parts.device, parts.strategy, parts.task, parts.bundle,
                                                      parts.model, parts.loss_fn)
    main = strategy.is_main
    notes = bundle.info.setdefault("notes", [])
    notes += [busy] if busy else []
    compile_log = run_dir / "compile.log" if config.train.compile else None
    if compile_log is not None and device.type == "cpu":
        notes.append(say(_WORDS, lang, "compile_cpu", log=compile_log))
    if on_data is not None and main:
        on_data(bundle)
    pin = device.type == "cuda"
    from trainwell.app.auto import resolve_auto

    auto = resolve_auto(config, run_dir, parts, console=console)  # --batch-size / --lr auto: numbers, recorded
    config = auto.config
    tc = config.train
    loggers = run_loggers(config.log, params=config.to_dict(), run_dir=run_dir, log_every=tc.log_every) if main else []
    train_loader = parts.loader(tc.batch_size)
    val_loader = _eval_loader(bundle.val, config, pin, task, strategy)
    params: Any = list(model.parameters()) + list(loss_fn.parameters())
    head = None
    if config.model.pretrained:  # the fine-tuning recipe: the backbone at its own, lower rate
        from trainwell.engine.finetune import param_groups
        from trainwell.models.head import head_module

        head = head_module(model)
        params = param_groups(model, head, tc.lr, tc.finetune.backbone_lr, others=list(loss_fn.parameters()))
    optimizer = build_optimizer(params, tc.optimizer, tc.lr, weight_decay=tc.weight_decay, momentum=tc.momentum)
    scheduler, interval = build_scheduler(optimizer, tc.scheduler, epochs=tc.epochs,
                                          steps_per_epoch=train_loader.batches_per_epoch,
                                          step_size=tc.step_size, gamma=tc.gamma)
    train_transform, eval_transform = task.transforms(config, bundle)
    extra = {"config": config.to_dict(), "data": task.payload(config, bundle)}
    callbacks = folder_callbacks(run_dir, checkpoint_every=tc.checkpoint_every, log_every=tc.log_every, extra=extra,
                                 main=main, loggers=loggers)
    from trainwell.engine.progress import progress_callback

    shown = progress_callback(progress if main else "none", console, lang=lang)  # only rank 0 prints
    if shown is not None:
        callbacks.insert(0, shown)
    if tc.ema is not None:
        from trainwell.engine.ema import Ema

        callbacks.insert(0, Ema(tc.ema))
    callbacks += auto.callbacks  # summary.json's record of what the finders chose
    if head is not None and tc.finetune.freeze_epochs:
        from trainwell.engine.finetune import FreezeBackbone

        strategy.check_freezing()
        callbacks.insert(0, FreezeBackbone(model, head, tc.finetune.freeze_epochs))
    if doctor and main and strategy.shards_model:  # its checks read whole weights and gradients on rank 0 alone
        print("trainwell: the doctor does not watch fsdp runs yet: its checks read whole weights and gradients, "
              "which no process holds (they would wait for the others); this run trains without it",
              file=sys.stderr)
    elif doctor and main:  # the doctor looks at rank 0's process, whose model and data are every process's
        from trainwell.doctor.callback import DoctorCallback

        callbacks.append(DoctorCallback(console=console, run_dir=run_dir, config=config, lang=lang))
    options: dict[str, Any] = {
        "val_loader": val_loader, "epochs": tc.epochs, "device": device, "scheduler": scheduler,
        "scheduler_interval": interval, "train_transform": train_transform, "eval_transform": eval_transform,
        "grad_clip": tc.grad_clip, "seed": config.seed, "monitor": tc.monitor, "monitor_mode": tc.monitor_mode,
        "log_every": tc.log_every, "callbacks": callbacks, "metric": task.metric(config, bundle),
        "precision": tc.precision, "accumulate": tc.accumulate, "strategy": strategy, "compile": tc.compile,
        "early_stop": early_stop_from(tc.early_stop)}
    trainer = Trainer(model, loss_fn, optimizer, train_loader, **options)
    if main:
        remove_leftovers(run_dir / "checkpoints" / SHARDS)  # of a sharded save that was killed
    strategy.barrier()
    last = last_checkpoint(run_dir / "checkpoints") if resume else None
    if last is not None:  # every process loads the same last checkpoint (a sharded one: each its own part)
        trainer.load_state_dict(load_shards(last, trainer.model, trainer.optimizer) if last.is_dir()
                                else load_checkpoint(last))
        if main and not (run_dir / "env.json").is_file():  # lost, or set aside as unreadable: this machine's
            from trainwell.env import collect_env

            write_json(run_dir / "env.json", {**collect_env(), **distributed_facts(strategy)})
    elif main:  # a new run, or one stopped before its first checkpoint: (again) from step 0, seeded alike
        if resume:
            import shutil

            shutil.rmtree(run_dir / "tensorboard", ignore_errors=True)  # the stopped attempt's events
        save_yaml(config, run_dir / "config.yaml", notes=auto.notes)
        task.write_files(run_dir)
        from trainwell.env import collect_env

        write_json(run_dir / "env.json", {**collect_env(), **distributed_facts(strategy)})
    if on_ready is not None and main:
        on_ready(trainer, bundle)
    with compile_messages(compile_log if main else None):
        trainer.fit()
        summary = finish_run(trainer, run_dir, config=config.to_dict(), task=(task, bundle, config),
                             test_loader=_eval_loader(bundle.test, config, pin, task, strategy), extra_summary={
                                 "data": config.data.name, "model": config.model.name, "device": str(device),
                                 "split_sizes": bundle.info.get("sizes"),
                                 "label_mapping": bundle.info.get("label_mapping"),
                             }, lang=lang)
    return RunResult(run_dir, summary, trainer)


def _eval_loader(dataset: Any, config: Config, pin: bool, task: Task | None = None,
                 strategy: Strategy | None = None) -> EpochLoader | None:
    """Each process evaluates its share of every batch: every sample of the split once, over all processes."""
    if dataset is None or len(dataset) == 0:
        return None
    return EpochLoader(dataset, batch_size=max(EVAL_BATCH, config.train.batch_size), shuffle=False,
                       seed=config.seed, sharding=strategy,
                       **_loader_options(task, config, dataset, pin, train=False))


def _loader_options(task: Task | None, config: Config, dataset: Any, pin: bool, *, train: bool) -> dict[str, Any]:
    """Workers, pinning and prefetching chosen from the machine and the data (``data.num_workers`` overrides
    the count), plus what a task adds (text: per-batch padding, length buckets)."""
    extra = task.loader_options(config, dataset, train=train) if task is not None else {}
    workers = extra.pop("num_workers", config.data.num_workers)
    options = loader_defaults(this_machine(), in_memory=isinstance(dataset, TensorData), cuda=pin, workers=workers)
    return {**options, **extra}


def finish_run(trainer: Trainer, run_dir: Path, *, config: dict[str, Any], test_loader: Any = None,
               extra_summary: dict[str, Any] | None = None,
               task: tuple[Task, DataBundle, Config] | None = None, lang: str = "en") -> dict[str, Any]:
    """Evaluate the best checkpoint on the test split (and let the task add its own figures),
    then write summary.json and report.html (its headings in ``lang``). Every process evaluates its share;
    rank 0 writes."""
    strategy = trainer.strategy
    main = strategy.is_main
    strategy.barrier()  # rank 0 has written best.pt before anyone reads it
    st = trainer.state
    best_path = run_dir / "checkpoints" / "best.pt"
    final_weights = {k: v.clone() for k, v in strategy.model_state(trainer.model).items()}
    final_loss = {k: v.clone() for k, v in trainer.loss_fn.state_dict().items()} \
        if isinstance(trainer.loss_fn, torch.nn.Module) else None
    if best_path.exists():
        best = load_checkpoint(best_path)
        strategy.load_model_state(trainer.model, best["model"])
        if final_loss is not None and best.get("loss") is not None:
            trainer.loss_fn.load_state_dict(best["loss"])
    best_row = next((r for r in st.history if r["epoch"] == st.best_epoch), st.history[-1] if st.history else {})
    summary: dict[str, Any] = {
        "test_accuracy": None, "test_loss": None,
        "val_accuracy": best_row.get("val_accuracy"), "val_loss": best_row.get("val_loss"),
        **{k: v for k, v in best_row.items() if k.startswith("val_")},
        "best_epoch": st.best_epoch, "epochs": st.epoch, "steps": st.step,
        "stopped_early": st.stopped_epoch is not None, "stopped_epoch": st.stopped_epoch,
        "stop_reason": st.stop_reason,
        "train_seconds": st.train_seconds,
        "samples_per_second": st.samples_seen / st.train_seconds if st.train_seconds else None,
        "parameters": sum(p.numel() for p in trainer.model.parameters()),
        **peak_memory(trainer.device),
    }
    if test_loader is not None:  # every process its share (an exchange: before rank 0 goes on alone)
        metrics = trainer.evaluate(test_loader)
        for name, value in metrics.items():
            summary[f"test_{name}"] = value
    task_sections: list[tuple[str, str]] = []
    # (Gathering a sharded model's weights is an exchange: every process takes part, rank 0 receives them.)
    consolidated = strategy.model_state(trainer.model) if task is not None and strategy.shards_model else None
    if task is not None and main:  # the task's own figures come from whole splits, computed by rank 0 alone,
        # after the last exchange: the other processes do not wait for it (they end here)
        sharded = trainer.model
        if consolidated is not None:  # one process cannot run a sharded forward alone: a whole copy of the model
            trainer.model = task[0].build_model(task[2], task[1]).to(trainer.device)
            trainer.model.load_state_dict(consolidated)
        try:
            task_summary, task_sections = task[0].finish(trainer, task[1], task[2], run_dir)
        finally:
            trainer.model = sharded
        summary.update(task_summary)
    strategy.load_model_state(trainer.model, final_weights)  # the caller gets the model as training left it
    if final_loss is not None:
        trainer.loss_fn.load_state_dict(final_loss)
    summary.update(extra_summary or {})
    summary.update(distributed_facts(trainer.strategy))
    if not main:
        return summary
    extra = list(task_sections)
    for cb in trainer.callbacks:  # the doctor adds its findings; any callback may add its own
        summary.update(cb.summary_entries(trainer))
        extra += cb.report_sections(trainer)
    summary["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    from trainwell.app.complete import save_sections

    save_sections(run_dir, extra)  # before summary.json: a report lost after it can be rebuilt whole
    write_json(run_dir / "summary.json", summary)
    from trainwell.report.html import run_title, write_report
    from trainwell.report.metrics import read_steps

    report_summary = {k: v for k, v in summary.items() if not isinstance(v, (dict, list))}
    write_report(run_dir / "report.html", title=run_title(run_dir.name, lang), epochs=st.history,
                 steps=read_steps(run_dir / "steps.csv"), config=config, summary=report_summary, extra_sections=extra,
                 lang=lang)
    from trainwell.results.card import write_card
    write_card(run_dir)  # README.md, the model card, from the files just written
    for cb in trainer.callbacks:  # e.g. MLflow takes the finished folder's files
        cb.on_run_end(trainer, summary)
    return summary
