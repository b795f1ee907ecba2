"""set-epoch-missing: a shuffling DistributedSampler read for another epoch without ``set_epoch``.

A ``DistributedSampler`` shuffles with a generator seeded by ``seed + epoch``, and its epoch changes only through
``sampler.set_epoch(epoch)``: without the call every epoch reads the samples in the same order. Judged when a
DataLoader iterator yields the first batch of a pass (its ``_num_yielded`` is 1; a persistent-workers loader reuses
its iterator) over a ``DistributedSampler`` with ``shuffle=True``: the sampler's epoch is the one of its previous
pass. Needs no second process: the sampler behaves the same with one.
"""

from __future__ import annotations

import weakref
from typing import Any

from torch.utils.data.distributed import DistributedSampler

from trainwell.doctor.check import Check, Text, register, sampled_and_first_batch
from trainwell.doctor.checks.ddp_sampler import loader_sampler
from trainwell.doctor.events import BatchEvent


@register
class SetEpochMissing(Check):
    id = "set-epoch-missing"
    loop_only = True
    severity = "warning"
    summary = "a shuffling DistributedSampler without sampler.set_epoch(epoch): the same order every epoch"
    text = {
        "en": Text(
            title="DistributedSampler.set_epoch() is not called: every epoch has the same order",
            message="The training DataLoader's DistributedSampler shuffles, but its epoch stayed at {epoch} for pass "
                    "{passes} over the data. It seeds its shuffle with seed + epoch, so without set_epoch every "
                    "epoch presents the samples in exactly the same order (and each rank always gets the same "
                    "samples), which weakens the shuffling that training relies on.",
            fix="call it at the start of every epoch, before iterating: for epoch in range(epochs): "
                "sampler.set_epoch(epoch); for x, y in loader: ..."),
        "zh": Text(
            title="没有调用 DistributedSampler.set_epoch()：每个 epoch 的顺序都一样",
            message="训练用 DataLoader 的 DistributedSampler 开启了打乱，但在第 {passes} 次遍历数据时它的 epoch "
                    "仍然是 {epoch}。它用 seed + epoch 作为打乱的种子，所以不调用 set_epoch，每个 epoch 的样本顺序都完全"
                    "相同（每个进程也总是拿到同样的样本），削弱了训练所依赖的随机打乱。",
            fix="在每个 epoch 开始、遍历数据之前调用：for epoch in range(epochs): sampler.set_epoch(epoch); "
                "for x, y in loader: ..."),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.passes: weakref.WeakKeyDictionary[Any, list[int]] = weakref.WeakKeyDictionary()  # sampler -> epochs

    @sampled_and_first_batch  # only a pass's first batch counts
    def on_batch(self, ev: BatchEvent) -> None:
        if self.reported or getattr(ev.iterator, "_num_yielded", None) != 1:
            return
        sampler = loader_sampler(ev.iterator)
        if not isinstance(sampler, DistributedSampler) or not sampler.shuffle:
            return
        epochs = self.passes.setdefault(sampler, [])
        epochs.append(sampler.epoch)
        if len(epochs) >= 2 and epochs[-1] == epochs[-2]:
            self.report(ev.where, {"epochs_seen": epochs}, epoch=sampler.epoch, passes=len(epochs))
