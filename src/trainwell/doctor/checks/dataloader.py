"""dataloader-bottleneck: the training loop spends most of its time waiting for the next batch.

Judged from time alone: for each place a DataLoader is iterated (and each dataset there), the
time ``next()`` took (the wait) against the time from one batch to the next (wait + the
training work on the batch). An iterator's batches all count for the place of its first one (a
``next(it)`` before the loop over the same iterator is one stream). Only intervals with a ``backward()`` in them count, so
validation loops and epoch boundaries (worker start-up, evaluation) stay out.

The batches of the session's windows are timed (a sampled step's batch and the next one: one interval a window,
and every interval of the first ten steps), not every batch: a loader that starves the loop does so on any
step, so the median of those intervals tells it as the median of all would, and the steps between windows pay
nothing for it.
"""

from __future__ import annotations

import os
import statistics
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trainwell.doctor.check import Check, Text, register, sampled_and_next
from trainwell.doctor.events import BatchEvent, batch_items

WINDOW = 8  # batch-to-batch intervals needed before judging during the run (re-judged every JUDGE_EVERY more)
JUDGE_EVERY = 4
JUDGE_LATER = 32  # once 64 intervals are in: the medians over 200 move slowly
FULL = 200  # intervals in the window (the latest ones)
AT_END = 4  # a run that ended with fewer intervals is judged at its end from as few as this many...
END_AGREE = 1.0  # ...when every one of them shows the wait (with WINDOW or more, AGREE of them must)
AGREE = 0.75
MIN_SHARE = 0.5  # median wait / median interval
MIN_WAIT_S = 0.005  # a few ms per batch: tiny in-memory datasets never reach it
MIN_WAIT_PER_ITEM_S = 15e-6  # indexing tensors costs ~3 us per item; real per-item work costs more


@dataclass
class _Stream:
    """Timing of one DataLoader iterated at one place."""

    last_time: float = 0.0
    last_iterator: int = 0
    last_backward: int = -1
    last_batch: int = -1  # the session's count of batches when the stream's latest batch came
    waits: deque[float] = field(default_factory=lambda: deque(maxlen=FULL))
    intervals: deque[float] = field(default_factory=lambda: deque(maxlen=FULL))
    items: deque[int] = field(default_factory=lambda: deque(maxlen=FULL))  # items in the batches that waited
    slow: int = 0  # waits in ``waits`` of at least MIN_WAIT_S: fewer than AGREE of them, and there is nothing to judge
    new: int = 0  # intervals added since the last judgement
    num_workers: int = -1
    pin_memory: bool = False
    where: str | None = None


_batch_size = batch_items  # items in a batch: the first dimension of its first tensor


@register
class DataLoaderBottleneck(Check):
    id = "dataloader-bottleneck"
    severity = "info"  # about speed: nothing computed is wrong (error: certainly wrong; warning: very likely wrong)
    summary = "the training loop spends most of its time waiting for the DataLoader"
    text = {
        "en": Text(
            title="Training waits for data {share}% of the time",
            general="Training spends much of its time waiting for data",
            message="Each batch took {wait_ms} ms to load, while a whole training step (loading + compute) took "
                    "{step_ms} ms: the model sat idle {share}% of the time, measured over {batches} training steps, "
                    "{waiting} of which spent more than half their time waiting ({item_ms} ms of loading per item, with num_workers={num_workers}). Training would run up to "
                    "{speedup}x faster if the next batch were ready when the step ends.",
            fix="load in parallel and do less per item: DataLoader(ds, batch_size=..., {workers_arg}"
                "persistent_workers=True, pin_memory=torch.cuda.is_available())  # and move decoding / fixed "
                "preprocessing out of __getitem__ (do it once in __init__ or cache it)"),
        "zh": Text(
            title="训练有 {share}% 的时间在等数据",
            general="训练有很大一部分时间在等数据",
            message="每个批次加载要 {wait_ms} 毫秒，而整个训练步（加载 + 计算）用时 {step_ms} 毫秒：在统计的 {batches} "
                    "个训练步里，模型有 {share}% 的时间在空等（其中 {waiting} 个训练步一半以上的时间在等数据；每个样本加载 {item_ms} 毫秒，num_workers={num_workers}）。"
                    "如果训练步结束时下一个批次已经准备好，训练最多可快 {speedup} 倍。",
            fix="并行加载并减少每个样本的工作：DataLoader(ds, batch_size=..., {workers_arg}"
                "persistent_workers=True, pin_memory=torch.cuda.is_available())  # 并把解码、固定的预处理移出 "
                "__getitem__（在 __init__ 里做一次或缓存起来）"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.streams: dict[tuple[str | None, int], _Stream] = {}
        # (weak reference to, stream of) the iterator of the latest batch: the next batch is most often its own.
        self.last: tuple[Callable[[], Any], _Stream] = (lambda: None, _Stream())

    @sampled_and_next  # the batches of windows (see the module's text)
    def on_batch(self, ev: BatchEvent) -> None:
        if self.reported:
            return
        it = ev.iterator
        ref, s = self.last
        if it is None or ref() is not it:  # (the iterator's stream is remembered: no key to make for each batch)
            s = self._stream((ev.site, id(getattr(it, "_dataset", None))), lambda: ev.where)
            if it is not None:
                try:
                    self.last = (weakref.ref(it), s)
                except TypeError:  # an iterator that takes no weak reference: looked up by its key each time
                    pass
        self._timed(s, id(it) if it is not None else 0, self.session.batches, ev.wait_seconds, time.perf_counter(),
                    self.session.backward_count, ev)

    def _stream(self, key: tuple[Any, int], where: Callable[[], str | None]) -> _Stream:
        s = self.streams.get(key)
        if s is None:
            s = self.streams[key] = _Stream()
            s.where = where()  # (the user's line: found once per stream, it walks the stack)
        return s

    def _timed(self, s: _Stream, iterator: int, batch: int, wait: float, now: float, backward: int,
               ev: BatchEvent) -> None:
        """One batch of stream ``s`` (``batch``: the session's count of batches, this one included): its wait, and
        the interval since the stream's batch before it when that was the batch just before (no batch between
        them went unseen)."""
        same_iterator = iterator != 0 and iterator == s.last_iterator
        # An interval counts when it holds training work and stays inside one epoch's iterator.
        if same_iterator and batch == s.last_batch + 1 and backward > s.last_backward >= 0:
            waits = s.waits
            if len(waits) == waits.maxlen and waits[0] >= MIN_WAIT_S:
                s.slow -= 1  # about to leave the window
            waits.append(wait)
            s.intervals.append(now - s.last_time)
            if wait >= MIN_WAIT_S:  # (only a batch that waited long enough to count is sized)
                s.slow += 1
                s.items.append(_batch_size(ev.batch))
            s.new += 1
        s.last_time, s.last_iterator, s.last_backward, s.last_batch = now, iterator, backward, batch
        if iterator and not same_iterator:  # (an iterator's settings are fixed: read once per epoch)
            it = ev.iterator
            s.num_workers, s.pin_memory = int(getattr(it, "_num_workers", -1)), bool(getattr(it, "_pin_memory", False))
        # Judged often at first, so that a slow loader is named early; then every JUDGE_LATER batches.
        if len(s.intervals) >= WINDOW and s.new >= (JUDGE_EVERY if len(s.intervals) < 64 else JUDGE_LATER):
            s.new = 0
            self._judge(s, AGREE)

    def on_end(self) -> None:
        for s in list(self.streams.values()):
            if not self.reported and AT_END <= len(s.intervals) < WINDOW:
                self._judge(s, END_AGREE)

    def _judge(self, s: _Stream, agree: float) -> None:
        if s.slow < agree * len(s.intervals):
            return  # too few batches waited MIN_WAIT_S: no need to sort the window (most runs, on every judgement)
        wait = statistics.median(s.waits)
        interval = statistics.median(s.intervals)
        items = statistics.median(s.items) or 1
        if interval <= 0 or wait < MIN_WAIT_S or wait / interval < MIN_SHARE or wait / items < MIN_WAIT_PER_ITEM_S:
            return
        # How sure: the batches that each, on their own, spent most of their step waiting.
        waiting = sum(w >= MIN_SHARE * i and w >= MIN_WAIT_S for w, i in zip(s.waits, s.intervals))
        if waiting < agree * len(s.intervals):
            return
        share = min(wait / interval, 1.0)
        cpus = os.cpu_count() or 1
        workers_arg = f"num_workers={cpus}, " if s.num_workers < cpus else ""  # more workers than CPUs won't help
        self.report(s.where, {"median_wait_s": wait, "batches_waiting": waiting, "median_step_s": interval, "wait_share": share,
                               "batches": len(s.intervals), "batch_size": items, "num_workers": s.num_workers,
                               "pin_memory": s.pin_memory, "cpu_count": cpus},
                    share=round(100 * share), wait_ms=round(wait * 1e3, 1), step_ms=round(interval * 1e3, 1),
                    batches=len(s.intervals), waiting=waiting, num_workers=max(s.num_workers, 0), item_ms=round(wait / items * 1e3, 2),
                    speedup=round(1 / max(1 - share, 0.05), 1), workers_arg=workers_arg)

