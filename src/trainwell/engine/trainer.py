"""The training loop of the guide, done right, with callbacks as extension points.

Per optimizer step: zero_grad(set_to_none) -> for each micro-batch of the global batch: move it to the
device -> (augment) -> forward and loss (under the precision's autocast) -> backward of the loss weighted by
the micro-batch's share of the global batch -> (unscale, clip) -> step -> (schedule). ``model.train()`` for
training, ``model.eval()`` + ``torch.inference_mode()`` for validation, every epoch.

Hardware knobs never change the optimization: ``precision`` (``engine/precision.py``), ``accumulate`` (micro-
batches per step, ``engine/accumulate.py``), the ``strategy`` (processes, ``engine/strategy.py``) and ``compile``
decide how a step is computed, not which samples it averages over.

The loop never waits for the device on its own: each step's loss stays a device tensor until
``sync`` reads all pending ones at once, every ``log_every`` steps, at an epoch's end and before a
checkpoint. Validation reads its sums once per pass.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler

from trainwell.data.loading import MicroBatch
from trainwell.engine.accumulate import batch_size as _batch_size
from trainwell.engine.accumulate import group_steps, micro_weights, steps_per_epoch
from trainwell.engine.distributed import exchange
from trainwell.engine import early_stop as _early_stop
from trainwell.engine.callbacks import Callback
from trainwell.engine.interrupt import catch_ctrl_c
from trainwell.engine.metrics import Accuracy, Metric, combine, hit_rates
from trainwell.engine.monitor import check_mode, direction, monitored_value
from trainwell.engine.precision import Precision, precision_plugin
from trainwell.engine.seed import EpochDraws, SampleDraws, get_rng_state, seed_rank_stream, set_rng_state
from trainwell.engine.state import TrainState
from trainwell.engine.strategy import SingleDevice, Strategy

# A loss returns a scalar tensor, or a mapping with the total under "loss" and named parts
# (multi-task losses); each part is averaged per epoch as train_<name> / val_<name>.
LossFn = Callable[[Any, Any], "torch.Tensor | Mapping[str, torch.Tensor]"]
# (batch, draws or None) -> model input. Training batches get their samples' augmentation randomness
# (``SampleDraws``: a function of seed, epoch and each sample's index); evaluation batches get None.
InputTransform = Callable[[torch.Tensor, SampleDraws | None], torch.Tensor]


class StopTraining(Exception):
    """Raise from a callback to end training after the current batch."""


_SAMPLES = "\0samples"  # the sample count among evaluate's named sums (no loss part is named so)


def to_device(obj: Any, device: torch.device, non_blocking: bool = False) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=non_blocking)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(o, device, non_blocking) for o in obj)
    if isinstance(obj, dict):
        return {k: to_device(v, device, non_blocking) for k, v in obj.items()}
    return obj


def _split_batch(batch: Any) -> tuple[Any, Any]:
    if isinstance(batch, (list, tuple)) and len(batch) == 2:
        return batch[0], batch[1]
    if isinstance(batch, dict) and {"x", "y"} <= batch.keys():
        return batch["x"], batch["y"]
    raise TypeError("Each batch must be (inputs, targets) or a dict with 'x' and 'y'; "
                    f"got {type(batch).__name__}. Make your Dataset return (x, y) pairs.")


def split_loss(value: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A loss function's result -> (the total to minimize, its named parts)."""
    if isinstance(value, Mapping):
        if "loss" not in value:
            raise TypeError("A loss function that returns a dict must put the total under 'loss' "
                            f"(got keys {sorted(value)}).")
        return value["loss"], {k: v for k, v in value.items() if k != "loss"}
    return value, {}


def call_model(model: nn.Module, x: Any) -> Any:
    """``model(x)``; a tuple input (e.g. token ids and lengths) is passed as separate arguments."""
    return model(*x) if isinstance(x, tuple) else model(x)


@dataclass
class _Step:
    """A step whose loss (and parts) are still on the device."""

    step: int
    size: int
    lr: float
    loss: torch.Tensor
    parts: dict[str, torch.Tensor]
    hits: dict[str, torch.Tensor] = field(default_factory=dict)  # accuracy name -> the step's share of hits


def _read(tensors: list[torch.Tensor]) -> list[float]:
    """Scalar tensors -> floats in one transfer (one host-device sync)."""
    if not tensors:
        return []
    return torch.cat([t.reshape(1) for t in tensors]).tolist()  # type: ignore[no-any-return]


class Trainer:
    """Runs epochs of training and validation; callbacks observe and extend it.

    ``monitor`` names the logged value that picks the best epoch (default: ``val_loss`` with a
    ``val_loader``, else ``train_loss``); a value the run does not log is an error at the end of the
    first epoch. ``monitor_mode`` is ``"min"``, ``"max"`` or ``"auto"`` (losses are minimized, a metric's
    values go the way the metric declares). ``log_every`` is how many steps pass between reads of the
    losses from the device.

    ``precision`` is ``"32"``, ``"bf16-mixed"``, ``"16-mixed"`` or a :class:`Precision` plugin. Each batch the
    ``train_loader`` yields is a micro-batch: an ``EpochLoader`` says which of them make one optimizer step;
    with any other loader, ``accumulate`` consecutive batches do. ``strategy`` (default :class:`SingleDevice`)
    spreads steps over processes. ``compile=True`` runs the forward through ``torch.compile``; ``model`` (its
    ``state_dict``, checkpoints, callbacks) stays the plain module. ``early_stop`` (an :class:`EarlyStop`) ends the
    run after the epoch that ran out of patience; ``state.stop_reason`` says why.
    """

    def __init__(self, model: nn.Module, loss_fn: LossFn, optimizer: Optimizer, train_loader: Iterable[Any], *,
                 val_loader: Iterable[Any] | None = None, epochs: int = 5, device: torch.device | None = None,
                 scheduler: LRScheduler | None = None, scheduler_interval: str = "step",
                 train_transform: InputTransform | None = None, eval_transform: InputTransform | None = None,
                 grad_clip: float | None = None, seed: int = 0, monitor: str | None = None,
                 monitor_mode: str = "auto", log_every: int = 10, callbacks: list[Callback] | None = None,
                 metric: Callable[[], Metric] = Accuracy, precision: str | Precision = "32", accumulate: int = 1,
                 strategy: Strategy | None = None, compile: bool = False,
                 early_stop: _early_stop.EarlyStop | None = None) -> None:
        check_mode(monitor_mode)
        if log_every < 1:
            raise ValueError(f"log_every must be at least 1, got {log_every}")
        if accumulate < 1:
            raise ValueError(f"accumulate must be at least 1, got {accumulate}")
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.epochs = epochs
        self.device = device or torch.device("cpu")
        self.scheduler = scheduler
        self.scheduler_interval = scheduler_interval
        self.train_transform = train_transform
        self.eval_transform = eval_transform
        self.grad_clip = grad_clip
        self.seed = seed
        self._own_stream = False  # this process's torch stream is its own (``seed_rank_stream``, or a checkpoint's)
        self.monitor = monitor or ("val_loss" if val_loader is not None else "train_loss")
        self.monitor_mode = monitor_mode
        self.log_every = log_every
        self.callbacks = list(callbacks or [])
        self.metric = metric
        # Classification also counts the training batches' top-1 hits (``train_accuracy``, per head with several).
        probe = metric()
        self._train_hits = isinstance(probe, Accuracy)
        self._head_names = probe.names if isinstance(probe, Accuracy) else None
        self.precision = precision_plugin(precision, self.device)
        self.accumulate = accumulate
        self.early_stop = early_stop
        self.strategy = strategy or SingleDevice()
        # The module the forward pass goes through: the strategy's wrapper, compiled if asked. Its parameters
        # are ``model``'s, whose state_dict keys stay plain (no ``_orig_mod.`` or ``module.`` prefix).
        self.precision = self.strategy.adopt_precision(self.precision)
        self.forward_model = self.strategy.wrap(model)
        self.strategy.rebind(optimizer, model)
        if compile:
            self.forward_model = torch.compile(self.forward_model)
        # What evaluation runs through is the strategy's choice (DDP: the plain module, see DDP.eval_module).
        evaluated = self.strategy.eval_module(model, self.forward_model)
        self.eval_model = torch.compile(evaluated) if compile and evaluated is model else evaluated
        # A loss's own parameters (class centres, task weights) are outside the wrapped model: their gradients are
        # averaged over processes by the strategy, once per step.
        self._loss_params = [p for p in loss_fn.parameters() if p.requires_grad] \
            if isinstance(loss_fn, nn.Module) and self.strategy.world_size > 1 else []
        self.strategy.check_training(compile=compile, loss_params=bool(self._loss_params))
        self.state = TrainState()
        self.non_blocking = self.device.type == "cuda"
        self._pending: list[_Step] = []  # steps whose losses have not been read from the device yet
        self._interrupted = False  # a first Ctrl-C arrived: stop at the next step boundary
        self._at_boundary = True  # no step is half done: the state is one a checkpoint can resume exactly
        # Per hook, the bound methods of the callbacks that override it: found once per fit() (the callbacks are
        # read when it starts), since some hooks run every step.
        self._hooks: dict[str, list[Callable[..., Any]]] = {}
        self._grad_hooks = False  # whether a callback looks at gradients (set by fit(): else no call per step)
        # Set by a callback that watches every model call (the doctor): called as after(module, args, output)
        # after each call of forward_model / eval_model. Cheaper than a forward hook, which sends each call of the
        # hooked module through torch's slower path.
        self.call_watch: Callable[[nn.Module, tuple[Any, ...], Any], None] | None = None
        # Set by the doctor between its windows, in place of call_watch for training: called as
        # watch(module, args, output, loss, fetched) after each training micro-batch's backward() (fetched: the
        # batches taken from the loader for this step, on its first micro-batch; 0 on the others).
        self.step_watch: Callable[[nn.Module, tuple[Any, ...], Any, torch.Tensor, int], None] | None = None

    # ------------------------------------------------------------------ public

    def fit(self) -> TrainState:
        """Train the remaining epochs. Whatever hook or step raises, every callback that was started (and
        not yet ended) gets ``on_exception`` before the error propagates.

        Ctrl-C (single process, main thread): the first one lets the current step finish and then stops; a
        ``KeyboardInterrupt`` that arrives at a step boundary (also one a callback raises) first gets every started
        callback's ``on_interrupt`` (the checkpointer saves ``last.pt`` at that exact step). A second Ctrl-C
        raises at once, abandoning the save."""
        started: list[Callback] = []
        self._hooks = {}
        self._grad_hooks = bool(self._methods("on_before_optimizer_step"))
        restore = catch_ctrl_c(self)
        if not self._own_stream:  # (a resumed run's streams came from its checkpoint)
            seed_rank_stream(self.seed, self.strategy.rank)
            self._own_stream = True
        try:
            try:
                for cb in self.callbacks:
                    started.append(cb)
                    cb.on_fit_start(self)
                while self.state.epoch < self.epochs and self.state.stopped_epoch is None:
                    self._train_epoch()
                    row = self._end_epoch()
                    self._call("on_epoch_end", row)
                    if self._interrupted:
                        raise KeyboardInterrupt
            except StopTraining:
                self.sync()
            for cb in list(started):
                cb.on_fit_end(self)
                started.remove(cb)
        except BaseException as e:
            if (isinstance(e, KeyboardInterrupt) or self._interrupted) and self._at_boundary \
                    and self.strategy.world_size == 1:
                self._interrupted = True  # from here on, a (further) Ctrl-C raises at once
                try:
                    for cb in started:
                        cb.on_interrupt(self)
                except KeyboardInterrupt:
                    e.add_note("A second Ctrl-C stopped the checkpoint being saved; last.pt is the previous one.")
            _clean_up(self, started, e)
            if not isinstance(e, KeyboardInterrupt) and self._interrupted:
                raise KeyboardInterrupt from e  # e.g. the loader's workers, stopped by the same Ctrl-C
            raise
        finally:
            restore()
        return self.state

    def sync(self) -> None:
        """Read the losses of the steps since the last read (one wait for the device) into ``state``,
        then hand their rows to every callback's ``on_log``."""
        pending, self._pending = self._pending, []
        # Each process holds its share of every step's loss: the strategy sums the shares.
        values = iter(self.strategy.reduce_floats(_read([t for s in pending
                                                         for t in (s.loss, *s.parts.values(), *s.hits.values())])))
        st = self.state
        rows = []
        for s in pending:
            loss = next(values)
            st.epoch_loss_sum += loss * s.size
            for name in s.parts:
                st.epoch_parts[name] = st.epoch_parts.get(name, 0.0) + next(values) * s.size
            for name in s.hits:
                st.epoch_hits[name] = st.epoch_hits.get(name, 0.0) + next(values) * s.size
            rows.append({"step": s.step, "loss": loss, "lr": s.lr})
        if rows:
            self._call("on_log", rows)

    def evaluate(self, loader: Iterable[Any]) -> dict[str, float]:
        """Mean loss (and its parts) plus the task's metrics (accuracy for class targets) over
        ``loader``, in eval mode without autograd."""
        was_training = self.model.training
        self.model.eval()
        batches: list[tuple[int, list[str], list[torch.Tensor]]] = []
        metric = self.metric()
        self.strategy.sync_buffers(self.model)  # every process evaluates rank 0's BatchNorm statistics
        with torch.inference_mode():
            for planned, batch in _micro_batches(loader):
                if planned is not None and not planned.live:
                    if self.strategy.lockstep_eval:  # a sharded forward gathers with every process: join in
                        x, _ = to_device(_split_batch(batch), self.device, self.non_blocking)
                        with self.precision.autocast():
                            self._call_model(self.eval_model, x)
                    continue  # a stand-in that only keeps processes in step
                x, y = to_device(_split_batch(batch), self.device, self.non_blocking)
                if self.eval_transform is not None:
                    x = self.eval_transform(x, None)
                with self.precision.autocast():
                    out = self._call_model(self.eval_model, x)
                    total, parts = split_loss(self.loss_fn(out, y))
                values = {"loss": total, **parts}
                batches.append((_batch_size(y), list(values), [v.detach() for v in values.values()]))
                metric.update(out, y)
            read = iter(_read([t for _, _, tensors in batches for t in tensors]))
        self.model.train(was_training)
        sums: dict[str, float] = {}
        n = 0
        for size, names, _ in batches:
            for name in names:
                sums[name] = sums.get(name, 0.0) + next(read) * size
            n += size
        # Every process's share of the split, by name: a process without an evaluation batch holds no sums.
        sums = self.strategy.reduce_named({**sums, _SAMPLES: float(n)})
        n = int(sums.pop(_SAMPLES))
        metrics = {name: value / max(n, 1) for name, value in sums.items()} or {"loss": 0.0}
        if self.strategy.world_size > 1:
            combine(metric, self.strategy)
        metrics.update(metric.compute())
        return metrics

    def lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    def steps_per_epoch(self) -> int | None:
        """Optimizer steps in a whole epoch (``None`` for training data without a length)."""
        return steps_per_epoch(self.train_loader, self.accumulate)

    # ------------------------------------------------------------- checkpoint

    def state_dict(self, *, weights: bool = True) -> dict[str, Any]:
        """Everything exact resume needs; callbacks add their own entries (``on_save_checkpoint``).
        ``weights=False``: all but the model's and the optimizer's state (a sharded checkpoint holds those)."""
        self.sync()
        ckpt = {
            **({"model": self.strategy.model_state(self.model),
                "optimizer": self.strategy.optimizer_state(self.model, self.optimizer)} if weights else {}),
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
            "rng": get_rng_state(),  # rank 0's: what a run on another number of processes resumes from
            "state": self.state.to_dict(),
            "precision": self.precision.state_dict(),  # fp16: the loss scale, so resume stays exact
            # A loss with parameters (margin-loss class centres, learned task weights) resumes too.
            "loss": self.loss_fn.state_dict() if isinstance(self.loss_fn, nn.Module) else None,
        }
        if self.strategy.world_size > 1:  # each process's own stream (dropout), for exact resume on as many
            ckpt["rng_ranks"] = self.strategy.gather(get_rng_state())
        self._call("on_save_checkpoint", ckpt)
        return ckpt

    def load_state_dict(self, ckpt: dict[str, Any]) -> None:
        """Resume from ``ckpt``; one without ``model`` and ``optimizer`` (a sharded checkpoint's ``trainer.pt``)
        expects them loaded already (``trainwell.engine.shards.load_shards``)."""
        if "model" in ckpt:
            self.strategy.load_model_state(self.model, ckpt["model"])
        if isinstance(self.loss_fn, nn.Module) and ckpt.get("loss") is not None:
            self.loss_fn.load_state_dict(ckpt["loss"])
        if "optimizer" in ckpt:
            self.strategy.load_optimizer_state(self.model, self.optimizer, ckpt["optimizer"])
        if self.scheduler is not None and ckpt.get("scheduler") is not None:
            self.scheduler.load_state_dict(ckpt["scheduler"])
        self.state = TrainState.from_dict(ckpt["state"])
        self.precision.load_state_dict(ckpt.get("precision") or {})
        self._pending = []
        ranks = ckpt.get("rng_ranks")
        if isinstance(ranks, list) and len(ranks) == self.strategy.world_size:
            set_rng_state(ranks[self.strategy.rank])
        else:
            set_rng_state(ckpt["rng"])
            seed_rank_stream(self.seed, self.strategy.rank, self.state.step)
        self._own_stream = True
        self._call("on_load_checkpoint", ckpt)

    # ---------------------------------------------------------------- private

    def _call_model(self, model: nn.Module, x: Any) -> Any:
        watch = self.call_watch
        if watch is None:
            return call_model(model, x)
        args = x if isinstance(x, tuple) else (x,)
        out = model(*args)
        watch(model, args, out)  # (not reached when the call raises: as a forward hook would not be)
        return out

    def _methods(self, hook: str) -> list[Callable[..., Any]]:
        """The bound ``hook`` of each callback that overrides it (the base class's hooks do nothing)."""
        methods = self._hooks.get(hook)
        if methods is None:
            base = getattr(Callback, hook, None)
            methods = self._hooks[hook] = [getattr(cb, hook) for cb in self.callbacks
                                           if getattr(type(cb), hook, None) is not base]
        return methods

    def _call(self, hook: str, *args: Any) -> None:
        for method in self._methods(hook):
            method(self, *args)

    def _train_epoch(self) -> None:
        st = self.state
        loader = self.train_loader
        if hasattr(loader, "set_epoch"):
            loader.set_epoch(st.epoch, st.batch_in_epoch)  # type: ignore[attr-defined]
        elif hasattr(getattr(loader, "sampler", None), "set_epoch"):
            loader.sampler.set_epoch(st.epoch)  # type: ignore[attr-defined]  (DistributedSampler)
        self.model.train()
        self._call("on_epoch_start")
        draws = EpochDraws(self.seed, st.epoch)
        steps = group_steps(_micro_batches(loader), self.accumulate)
        started = time.perf_counter()
        while True:
            asked = time.perf_counter()
            group = next(steps, None)  # the step's micro-batches: the time spent here is waiting for data
            if group is None:
                break
            st.epoch_wait_seconds += time.perf_counter() - asked
            # (Several processes exchange the gradients inside backward(): a failed exchange names the step.)
            with exchange(f"step {st.step + 1}'s gradients") if self.strategy.world_size > 1 else nullcontext():
                loss = self._step(group, draws)
            now = time.perf_counter()
            st.epoch_seconds += now - started
            st.train_seconds += now - started
            started = now
            self._call("on_after_optimizer_step")
            if st.step % self.log_every == 0:
                self.sync()
            self._call("on_train_batch_end", loss)
            if self._interrupted:
                raise KeyboardInterrupt

    def _step(self, group: list[tuple[MicroBatch | None, Any]], draws: EpochDraws) -> torch.Tensor:
        """One optimizer step over a global batch's micro-batches; returns its (detached, device) loss."""
        st = self.state
        self._at_boundary = False
        pairs = [_split_batch(batch) for _, batch in group]
        # The targets go to the device first (asynchronously from a pinned loader): counted there, a per-token
        # loss's counts and shares stay on the device, with no copy from the host that waits for it.
        targets = [to_device(y, self.device, self.non_blocking) for _, y in pairs]
        # Each micro-batch's mean loss counts by its share of the global batch (None: it is the whole batch).
        first = group[0][0]
        shares = micro_weights(self.loss_fn, targets, self.strategy, self.device,
                               live=[m is None or m.live for m, _ in group],
                               step_samples=first.step_samples if first is not None else None)
        factor = self.strategy.gradient_factor
        self.optimizer.zero_grad(set_to_none=True)
        step_loss: torch.Tensor | None = None
        step_parts: dict[str, torch.Tensor] = {}
        step_hits: dict[str, torch.Tensor] = {}
        position = st.epoch_samples  # where samples without known indices sit in the epoch
        for i, ((planned, _), (x, _), y) in enumerate(zip(group, pairs, targets, strict=True)):
            x = to_device(x, self.device, self.non_blocking)
            size = _batch_size(y)
            if self.train_transform is not None:
                keys = planned.indices if planned is not None else list(range(position, position + size))
                x = self.train_transform(x, draws.for_samples(keys))
            position += size if planned is None or planned.live else 0
            exchange = i == len(group) - 1  # gradients are exchanged once, on the step's last micro-batch
            with nullcontext() if exchange else self.strategy.no_sync(self.forward_model):
                with self.precision.autocast():
                    out = self._call_model(self.forward_model, x)
                    loss, parts = split_loss(self.loss_fn(out, y))
                share = None if shares is None else shares[i]
                self.precision.backward(loss, share if share is None or factor == 1 else share * factor)
            if self.step_watch is not None:
                self.step_watch(self.forward_model, x if isinstance(x, tuple) else (x,), out, loss,
                                len(group) if i == 0 else 0)
            loss, parts = loss.detach(), {k: v.detach() for k, v in parts.items()}
            hits = hit_rates(out, y, self._head_names) if self._train_hits else {}
            if share is not None:  # the step's loss: its micro-batches' mean losses weighted by their shares
                loss, parts = loss * share, {k: v * share for k, v in parts.items()}
                hits = {k: v * share for k, v in hits.items()}
            step_loss = loss if step_loss is None else step_loss + loss
            for k, v in parts.items():
                step_parts[k] = step_parts[k] + v if k in step_parts else v
            for k, v in hits.items():
                step_hits[k] = step_hits[k] + v if k in step_hits else v
        assert step_loss is not None
        self.strategy.reduce_gradients(self._loss_params)
        self.precision.unscale(self.optimizer)  # true gradients for clipping and for callbacks that read them
        if self.grad_clip is not None:
            self.strategy.clip_gradients(self.model.parameters(), self.grad_clip)
        if self._grad_hooks:
            self._call("on_before_optimizer_step")
        stepped = self.precision.step(self.optimizer)
        lr = self.lr()
        if self.scheduler is not None and self.scheduler_interval == "step":
            _step_scheduler(self.scheduler, stepped)
        size = first.step_samples if first is not None else sum(_batch_size(y) for _, y in pairs)
        st.step += 1
        st.batch_in_epoch += 1
        st.epoch_samples += size
        st.samples_seen += size
        self._pending.append(_Step(st.step, size, lr, step_loss, step_parts, step_hits))
        self._at_boundary = True
        return step_loss

    def _end_epoch(self) -> dict[str, Any]:
        self.sync()
        st = self.state
        row: dict[str, Any] = {
            "epoch": st.epoch + 1, "step": st.step,
            "train_loss": st.epoch_loss_sum / max(st.epoch_samples, 1),
            "val_loss": None, "val_accuracy": None, "lr": self.lr(), "seconds": st.epoch_seconds,
            # The share of the epoch's training time spent waiting for the loader's next batch.
            "data_wait": st.epoch_wait_seconds / st.epoch_seconds if st.epoch_seconds else 0.0,
            **self.precision.epoch_values(),
        }
        for name, value in {**st.epoch_parts, **st.epoch_hits}.items():
            row[f"train_{name}"] = value / max(st.epoch_samples, 1)
        if self.val_loader is not None:
            self._call("on_validation_start")
            try:
                for name, value in self.evaluate(self.val_loader).items():
                    row[f"val_{name}"] = value
            finally:
                self._call("on_validation_end")
        if self.scheduler is not None and self.scheduler_interval == "epoch":
            self.scheduler.step()
        value = monitored_value(row, self.monitor)
        higher = direction(self.monitor, self.monitor_mode, loss_names={"loss", *st.epoch_parts},
                           metric=self.metric()) == "max"
        better = st.best is None or (value > st.best if higher else value < st.best)
        if better and math.isfinite(value):
            st.best, st.best_epoch = value, st.epoch + 1
        row["is_best"] = st.best_epoch == st.epoch + 1
        if self.early_stop is not None:
            _early_stop.update(self.early_stop, st, value, higher=higher, monitor=self.monitor)
        st.history.append(row)
        st.epoch += 1
        st.batch_in_epoch = 0
        st.epoch_loss_sum, st.epoch_samples, st.epoch_seconds, st.epoch_wait_seconds = 0.0, 0, 0.0, 0.0
        st.epoch_parts, st.epoch_hits = {}, {}
        return row


def _clean_up(trainer: Trainer, started: list[Callback], error: BaseException) -> None:
    """``on_exception`` for each started callback, each one's cleanup run even when another's fails."""
    for cb in started:
        try:
            cb.on_exception(trainer, error)
        except BaseException as failed:  # noqa: BLE001 - the original error is the one to raise
            error.add_note(f"{type(cb).__name__}.on_exception failed as well: {type(failed).__name__}: {failed}")


def _micro_batches(loader: Iterable[Any]) -> Iterator[tuple[MicroBatch | None, Any]]:
    """The loader's batches with their planned place in a step (``EpochLoader``), else with None."""
    planned = getattr(loader, "micro_batches", None)
    if planned is not None:
        return planned()  # type: ignore[no-any-return]
    return ((None, batch) for batch in loader)


def _step_scheduler(scheduler: LRScheduler, stepped: bool) -> None:
    """A per-step schedule counts global batches, including one whose step fp16 skipped on overflow
    (torch warns when that happens on the very first step; the skip is logged as ``skipped_steps``)."""
    if stepped:
        scheduler.step()
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Detected call of `lr_scheduler\.step\(\)` before")
        scheduler.step()
