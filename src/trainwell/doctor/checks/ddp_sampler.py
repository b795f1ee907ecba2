"""ddp-data-not-sharded: under several processes, every rank trains on the same batches.

Judged across ranks (``CrossRankCheck``): each rank fingerprints the first batch of every DataLoader it trains
on (a loader whose batch is followed by ``backward()``; evaluation loaders are left out), in the order the
loaders are first used. When the N-th training loader gives the same first batch on every rank, no rank got a
share of its own: a DistributedSampler is missing, or an IterableDataset is not split per rank. Loaders that
shard their data another way (trainwell's own, a per-rank Subset, a sharded IterableDataset) give each rank
different batches and are never flagged. The fingerprint hashes the first 65,536 values of each tensor of the
batch, its shape and dtype, once per loader.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

from trainwell.doctor.check import Text, register
from trainwell.doctor.events import BackwardEvent, BatchEvent
from trainwell.doctor.ranks import CrossRankCheck, Verdict

HASHED_VALUES = 1 << 16
MAX_LOADERS = 20


def fingerprint(batch: Any) -> str:
    """A hash of a batch's tensors (and plain values), independent of the process that holds it."""
    digest = hashlib.blake2b(digest_size=12)

    def add(x: Any) -> None:
        if isinstance(x, torch.Tensor):
            flat = x.detach().reshape(-1)[:HASHED_VALUES].cpu()
            if flat.is_floating_point() and flat.dtype not in (torch.float32, torch.float64, torch.float16):
                flat = flat.float()  # bfloat16 and the float8 types have no numpy view
            digest.update(f"{tuple(x.shape)}{x.dtype}".encode())
            digest.update(flat.contiguous().numpy().tobytes())
        elif isinstance(x, dict):
            for k in sorted(x, key=str):
                digest.update(str(k).encode())
                add(x[k])
        elif isinstance(x, (list, tuple)):
            for item in x:
                add(item)
        else:
            digest.update(repr(x).encode())

    add(batch)
    return digest.hexdigest()


def loader_sampler(iterator: Any) -> Any:
    """The sampler behind a DataLoader iterator (the one inside its batch sampler, if any)."""
    index_sampler = getattr(iterator, "_index_sampler", None)
    return getattr(index_sampler, "sampler", index_sampler)


@register
class DataNotSharded(CrossRankCheck):
    id = "ddp-data-not-sharded"
    severity = "warning"
    summary = "several processes train on the same batches: no DistributedSampler (or unsplit IterableDataset)"
    text = {
        "en": Text(
            title="Every process trains on the same data",
            message="The first training batch was identical on all {world} ranks ({sampler}), so each process reads "
                    "the whole dataset instead of its own share. The processes average identical gradients: "
                    "{world} times the compute for the result of one, and an epoch is {world} times longer than "
                    "it looks.",
            fix="give each rank its share: sampler = DistributedSampler(train_set, shuffle=True); "
                "DataLoader(train_set, batch_size=64, sampler=sampler)  # and sampler.set_epoch(epoch) every epoch"),
        "zh": Text(
            title="每个进程都在同样的数据上训练",
            message="第一个训练批次在全部 {world} 个进程上完全相同（{sampler}），说明每个进程都在读取整个数据集，"
                    "而不是属于自己的那一份。各进程平均的是相同的梯度：花了 {world} 倍的算力，只得到一个进程的效果，"
                    "而且一个 epoch 实际上比看起来长 {world} 倍。",
            fix="让每个进程只读自己的一份：sampler = DistributedSampler(train_set, shuffle=True); "
                "DataLoader(train_set, batch_size=64, sampler=sampler)  # 并且每个 epoch 调用 sampler.set_epoch(epoch)"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.loaders: dict[int, dict[str, Any]] = {}  # id(dataset) -> its first batch's facts, in order of use
        self.last: int | None = None  # the loader of the latest batch

    def on_batch(self, ev: BatchEvent) -> None:
        if not self.session.cross_rank:
            self.session.relax(self, "on_batch", "on_backward")  # one process: no ranks to compare
            return
        if ev.iterator is None:
            return
        key = id(getattr(ev.iterator, "_dataset", ev.iterator))
        self.last = key
        if key not in self.loaders and len(self.loaders) < MAX_LOADERS:
            self.loaders[key] = {"order": len(self.loaders), "hash": fingerprint(ev.batch), "trained": False,
                                 "sampler": type(loader_sampler(ev.iterator)).__name__, "where": ev.where}

    def on_backward(self, ev: BackwardEvent) -> None:
        if not self.session.cross_rank:
            self.session.relax(self, "on_batch", "on_backward")  # one process: no ranks to compare
            return
        if self.last is not None and self.last in self.loaders:
            self.loaders[self.last]["trained"] = True

    def facts(self) -> Any:
        trained = [f for f in self.loaders.values() if f["trained"]]
        return trained or None

    @classmethod
    def judge(cls, facts: dict[int, Any], world_size: int) -> Verdict | None:
        if len(facts) < world_size:
            return None
        first = facts[min(facts)]
        for i, loader in enumerate(first):
            same = [r for r, fs in facts.items() if i < len(fs) and fs[i]["hash"] == loader["hash"]]
            if len(same) == world_size:
                return Verdict(loader["where"], {"identical_first_batch_on_ranks": same, "sampler": loader["sampler"]},
                               {"world": world_size, "sampler": f"sampler: {loader['sampler']}"}, same)
        return None
