"""``trainwell.fit``: the same engine as ``trainwell train``, for any ``nn.Module`` from Python."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from trainwell._errors import TrainwellError
from trainwell._spread import EXCHANGE_TIMEOUT_S, SHARD_MIN_SHARE, PrecisionName, StrategyName
from trainwell.app.fit_callbacks import LOG_EVERY, FitCallbacks, fit_callbacks
from trainwell.app.fit_data import StepsPerEpoch, as_loader, planned_steps
from trainwell.engine.accumulate import micro_batch_size
from trainwell.engine.callbacks import Callback
from trainwell.engine.device import resolve_device
from trainwell.engine.early_stop import early_stop_from
from trainwell.engine.monitor import check_mode
from trainwell.engine.optim import build_optimizer, build_scheduler
from trainwell.engine.seed import seed_everything
from trainwell.engine.strategy import Strategy
from trainwell.engine.trainer import Accuracy, LossFn, Trainer
from trainwell.machine import apply_threads

@dataclass
class FitResult:
    """What ``fit`` returns: the trained model, the per-epoch history, and the run folder if any."""

    model: nn.Module
    history: list[dict[str, Any]]
    steps: list[dict[str, Any]] = field(repr=False, default_factory=list)
    best_epoch: int | None = None
    train_seconds: float = 0.0
    run_dir: Path | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    findings: list[Any] = field(default_factory=list)  # the doctor's findings (fit(doctor=True))
    lr_find: Any = None  # fit(lr="find"): the range test (``suggestion``, the rate trained with, ``reason``, curve)

    @property
    def final(self) -> dict[str, Any]:
        """The last epoch's row (``train_loss``, ``val_loss``, ``val_accuracy``, ...)."""
        return self.history[-1] if self.history else {}


def fit(model: nn.Module, train_data: Dataset | DataLoader, val_data: Dataset | DataLoader | None = None, *,
        loss: LossFn | None = None, epochs: int = 5, lr: float | Literal["find"] = 1e-3,
        optimizer: str | torch.optim.Optimizer = "adam", batch_size: int = 64, seed: int = 0,
        out: str | Path | None = None, progress: bool | Literal["bar", "lines", "none"] = True,
        device: str = "auto", scheduler: str = "none", weight_decay: float = 0.0, grad_clip: float | None = None,
        callbacks: list[Callback] | None = None, doctor: bool = False, monitor: str | None = None,
        mode: Literal["auto", "min", "max"] = "auto", ema: float | None = None,
        steps_per_epoch: int | None = None, threads: int | None = None,
        precision: PrecisionName = "32", accumulate: int = 1,
        compile: bool = False, early_stop: Any = None, loggers: Sequence[Literal["mlflow"]] = (),
        mlflow_uri: str | None = None, mlflow_experiment: str = "trainwell", timeout: float = EXCHANGE_TIMEOUT_S,
        strategy: StrategyName = "auto", shard_min_share: float = SHARD_MIN_SHARE) -> FitResult:
    """Train ``model`` on ``train_data`` the way the guide says: train/eval modes, zeroed gradients,
    validation every epoch under ``inference_mode``, a progress bar with the smoothed loss.

    ``train_data`` / ``val_data`` are a ``Dataset`` of ``(x, y)`` pairs (batched and shuffled
    reproducibly from ``seed``), an ``IterableDataset`` (batched in its own order) or your own ``DataLoader``.
    ``loss`` defaults to cross-entropy on logits; it may return ``{"loss": total, "<part>": value}`` (e.g.
    ``trainwell.losses.MultiTaskLoss``), and each part is logged per epoch as ``train_<part>`` / ``val_<part>``.
    A loss that is an ``nn.Module`` with parameters (learned task weights) is moved to the device and optimized
    with the model, without weight decay; an optimizer object you pass yourself must include those parameters.
    With ``out``, a run folder gets metrics.csv, steps.csv, TensorBoard events, checkpoints, summary.json and
    report.html. ``progress``: ``True`` (or ``"bar"``) shows a progress bar and a line per epoch, ``False`` (or
    ``"lines"``) the line per epoch only, ``"none"`` prints nothing. ``doctor=True`` runs the doctor's checks
    while training (findings are printed, kept in ``result.findings`` and, with ``out``, in doctor.json).

    ``monitor`` is the logged value that picks the best epoch and ``best.pt`` (default ``"val_loss"``, or
    ``"train_loss"`` without ``val_data``; e.g. ``"val_accuracy_digit"`` for one head of a multi-task model);
    a value the run does not log is an error at the end of the first epoch. ``mode`` is ``"min"`` or ``"max"``;
    ``"auto"`` minimizes losses and takes a metric's direction from the metric (accuracies are maximized).
    ``ema`` (e.g. ``0.998``) keeps an exponential moving average of the weights, validates and checkpoints it,
    and returns the model holding the averaged weights. ``steps_per_epoch`` is needed only by a per-step
    schedule (``onecycle``, ``cosine``) over data without ``len()``: the number of optimizer steps one epoch makes.
    ``early_stop`` stops training once the monitored value (``monitor``, in its direction) has not improved for a
    number of epochs: ``early_stop=5``, or ``{"patience": 5, "min_delta": 0.001}`` (an epoch improves when it beats
    the best by more than ``min_delta``); the run then ends normally and ``result.summary`` has ``stopped_early``.
    ``lr="find"`` first runs the learning-rate range test on this model, optimizer, loss and data (as
    ``trainwell lr-find`` does; the model and optimizer are restored afterwards) and trains with its suggestion:
    ``result.lr_find`` has the rate, the reason and the curve (with ``out``, also lr_find.json and lr_find.png).
    When the curve shows no clear descent it is an error that says so, rather than a guessed rate.
    ``loggers=["mlflow"]`` also logs the run to MLflow (the ``[mlflow]`` extra): the arguments as params, every
    epoch's numbers, and with ``out`` the test figures and the folder's small files (not the checkpoints), to
    ``mlflow_uri`` (default ``$MLFLOW_TRACKING_URI``, else ``sqlite:///mlruns/mlflow.db``) in ``mlflow_experiment``.
    ``threads`` sets torch's intra-op CPU threads for this process; by default ``fit`` leaves the count your
    process already uses (``torch.set_num_threads`` is yours), while ``trainwell train`` picks the usable cores
    divided by the processes on the machine (``trainwell.machine``).

    Hardware knobs that do not change the training: ``precision`` (``"32"``, ``"bf16-mixed"``, ``"16-mixed"``:
    forward and loss under ``torch.autocast``, 16-mixed with a gradient scaler; with ``strategy="fsdp"``,
    both through FSDP's own mixed-precision policy); ``accumulate=N`` computes each
    ``batch_size`` batch (the samples of one optimizer step) in N micro-batches of ``batch_size / N`` with the
    same gradient (a ``DataLoader`` of your own yields the micro-batches: N of them make a step);
    ``compile=True`` runs the model through ``torch.compile`` (the returned model and checkpoints stay plain).
    Under torchrun (``WORLD_SIZE`` > 1) the same call trains with DDP: each process reads its share of every
    ``batch_size`` batch, rank 0 alone prints and writes ``out``, and the training is that of one process
    (see docs/SCALE.md); ``timeout`` is how many seconds an exchange between the processes may wait before the
    group stops with an error naming the rank and the exchange. ``strategy="fsdp"`` shards the model instead of
    copying it to every process (each block holding at least ``shard_min_share`` of the parameters, then the
    model): for models bigger than one device.

    >>> result = fit(nn.Linear(4, 3), torch.utils.data.TensorDataset(x, y), epochs=2, progress=False)
    >>> result.history[-1]["train_loss"]
    """
    arguments = dict(locals())  # the call's arguments, first: what config.yaml records (_fit_config)
    if ema is not None and not 0 < ema < 1:
        raise ValueError(f"ema must be a decay between 0 and 1 (e.g. 0.998), got {ema}")
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    finding = lr in ("find", "auto")
    if finding and not isinstance(optimizer, str):
        raise TrainwellError("lr='find' sweeps the learning rate of an optimizer trainwell builds; yours has its own "
                             "rates.", fix="pass optimizer by name ('adam', 'adamw', 'sgd'), or a number as lr")
    if isinstance(optimizer, str) and not finding and lr <= 0:
        raise ValueError(f"lr must be positive, got {lr}")
    check_mode(mode)
    stopping = early_stop_from(early_stop)
    from trainwell.engine import distributed
    from trainwell.engine.progress import progress_callback

    joined = distributed.active()  # a process group the caller set up stays; one fit() joins, it leaves
    try:
        dev = distributed.device_for(resolve_device(device))
        spread = distributed.strategy_for(dev, name=strategy, timeout=timeout, shard_min_share=shard_min_share)
        shown = progress_callback(progress if spread.is_main else "none")  # only rank 0 prints
        # The number used, as the run folder's config records it; None keeps the caller's own setting.
        arguments["threads"] = apply_threads(threads) if threads is not None else torch.get_num_threads()
        seed_everything(seed)
        model.to(dev)
        loss_fn: LossFn = loss if loss is not None else nn.CrossEntropyLoss()
        if isinstance(loss_fn, nn.Module):
            loss_fn.to(dev)
        micro = micro_batch_size(batch_size, processes=spread.world_size, accumulate=accumulate)
        train_loader = as_loader(train_data, batch_size, True, seed, micro, spread)
        val_loader = as_loader(val_data, max(256, batch_size), False, seed, strategy=spread)
        opt = build_optimizer(model.parameters(), optimizer, 1e-3 if finding else lr, weight_decay=weight_decay) \
            if isinstance(optimizer, str) else optimizer
        _add_loss_params(opt, model, loss_fn, own_optimizer=isinstance(optimizer, str))
        found = None
        if finding:  # the range test on these parts, then every group at its suggestion
            found, lr = _find_lr(model, loss_fn, opt, train_loader, spread, device=dev, precision=precision,
                                 accumulate=accumulate, grad_clip=grad_clip, seed=seed,
                                 say=spread.is_main and progress != "none")
            arguments["lr"] = lr
        sched, interval = build_scheduler(opt, scheduler, epochs=epochs,
                                          steps_per_epoch=planned_steps(train_loader, steps_per_epoch, accumulate))
        run_dir = None
        if out is not None:
            from trainwell.engine.run_folder import new_run_dir

            run_dir = distributed.on_rank0(lambda: new_run_dir(str(out), "fit", command="trainwell.fit"))
        recorded = _fit_config(arguments, stopping=stopping, found=found)
        from trainwell.config import LogConfig
        from trainwell.report.mlflow_logger import run_loggers

        log = LogConfig(loggers=list(loggers), mlflow_uri=mlflow_uri, mlflow_experiment=mlflow_experiment)
        logged = run_loggers(log, params=recorded, run_dir=run_dir, log_every=LOG_EVERY) if spread.is_main else []
        own = [*(callbacks or []), *([StepsPerEpoch(steps_per_epoch)] if steps_per_epoch is not None else [])]
        parts = fit_callbacks(own, strategy=spread, run_dir=run_dir, recorded=recorded, shown=shown, loggers=logged,
                              ema=ema, doctor=doctor, found=found, lr=lr if found is not None else None)
        task_names = getattr(loss_fn, "task_names", None)  # a multi-task loss names the heads
        metric = partial(Accuracy, names=task_names) if task_names else Accuracy
        trainer = Trainer(model, loss_fn, opt, train_loader, val_loader=val_loader, epochs=epochs, device=dev,
                          scheduler=sched, scheduler_interval=interval, grad_clip=grad_clip, seed=seed,
                          callbacks=parts.all, metric=metric, monitor=monitor, monitor_mode=mode, log_every=LOG_EVERY,
                          precision=precision, accumulate=accumulate, strategy=spread, compile=compile,
                          early_stop=stopping)
        state = trainer.fit()
        if parts.ema is not None:
            parts.ema.swap(trainer)  # the model returned is the averaged one: the weights that were validated
        return _result(trainer, state, run_dir, recorded, parts, found)
    finally:
        if not joined:  # (also when training raised: a process group left open can abort the process at exit)
            distributed.close()


def _result(trainer: Trainer, state: Any, run_dir: Path | None, recorded: dict[str, Any], parts: FitCallbacks,
            found: Any) -> FitResult:
    """The run folder finished (test figures, summary.json, report.html) and what ``fit`` returns."""
    summary: dict[str, Any] = {}
    steps = parts.steps or []
    if run_dir is not None:
        from trainwell.app.run import finish_run
        from trainwell.report.metrics import read_steps

        summary = finish_run(trainer, run_dir, config=recorded)
        trainer.strategy.barrier()  # rank 0 has written steps.csv
        steps = read_steps(run_dir / "steps.csv")
    return FitResult(model=trainer.model, history=state.history, steps=steps, best_epoch=state.best_epoch,
                     train_seconds=state.train_seconds, run_dir=run_dir, summary=summary,
                     findings=parts.doctor.findings if parts.doctor else [], lr_find=found)


def _find_lr(model: nn.Module, loss_fn: LossFn, opt: torch.optim.Optimizer, loader: Any, strategy: Strategy, *,
             say: bool, **options: Any) -> tuple[Any, float]:
    """fit(lr="find"): the range test and its suggestion; an error (with the reason) when it has none."""
    import sys

    from trainwell.app.lr_sweep import single_process, sweep

    single_process(strategy.world_size, "fit(lr='find')")
    found = sweep(model, loss_fn, opt, loader, **options)
    if found.suggestion is None:
        raise TrainwellError(f"fit(lr='find'): the learning-rate finder has {found.reason}.",
                             fix="check that the model learns at all (fit(..., doctor=True)), or pass a number as lr")
    for group in opt.param_groups:
        group["lr"] = found.suggestion
    if say:
        print(f"trainwell: learning rate {found.reason} ({found.seconds:.1f} s)", file=sys.stderr)
    return found, found.suggestion


def _add_loss_params(opt: torch.optim.Optimizer, model: nn.Module, loss_fn: Any, *, own_optimizer: bool) -> None:
    """Learned loss parameters (e.g. log-variances) join the optimizer, without weight decay: decay would
    pull them towards an arbitrary value instead of regularizing the model. A user's optimizer is not
    changed; a warning says what it misses."""
    if not isinstance(loss_fn, nn.Module):
        return
    known = {id(p) for group in opt.param_groups for p in group["params"]} | {id(p) for p in model.parameters()}
    extra = [p for p in loss_fn.parameters() if p.requires_grad and id(p) not in known]
    if not extra:
        return
    if own_optimizer:
        opt.add_param_group({"params": extra, "weight_decay": 0.0})
    else:
        warnings.warn(f"The loss {type(loss_fn).__name__} has {sum(p.numel() for p in extra)} trainable values "
                      "that your optimizer does not update, so they stay at their initial values. Build it with "
                      "both: torch.optim.Adam([*model.parameters(), *loss.parameters()]).", stacklevel=3)


# fit()'s arguments that config.yaml does not record: the data, the code and where output goes, not how the model
# is trained. Every other argument is recorded (a test checks that each one is in one list or the other).
NOT_RECORDED = frozenset({"model", "train_data", "val_data", "loss", "callbacks", "out", "progress", "doctor",
                          "loggers", "mlflow_uri", "mlflow_experiment"})


def _fit_config(arguments: dict[str, Any], *, stopping: Any, found: Any) -> dict[str, Any]:
    """The record of a fit: its arguments less ``NOT_RECORDED``, an object given for an option named by its type."""
    cfg = {k: v for k, v in arguments.items() if k not in NOT_RECORDED}
    cfg["early_stop"] = None if stopping is None else {"patience": stopping.patience, "min_delta": stopping.min_delta}
    if not isinstance(cfg["optimizer"], str):
        cfg["optimizer"] = type(cfg["optimizer"]).__name__
    cfg["model"] = type(arguments["model"]).__name__
    if found is not None:
        cfg["lr_found_by"] = "the learning-rate finder (lr='find'; lr_find.json)"
    return cfg
