"""ddp-data-not-sharded: under several processes, every rank trains on the same batches.

Judged across ranks (``CrossRankCheck``): each rank fingerprints the first batch of every DataLoader it trains
on (a loader whose batch is followed by ``backward()``; evaluation loaders are left out), in the order the
loaders are first used. When the N-th training loader gives the same first batch on every rank, no rank got a
share of its own: a DistributedSampler is missing, or an IterableDataset is not split per rank.

A loader that shuffles differently on each rank (no seed, or a seed per rank) gives different first batches
and still reads the whole dataset everywhere. So each rank also keeps a signature of every input row of its
first epoch of each loader (two projections of the row, up to ``MAX_ROWS`` rows, one vectorized operation per
batch): with shares of their own, two ranks read disjoint rows; without, rank r's rows turn up in rank 0's as
often as rank 0 read the dataset. Rows that repeat within a rank's own data make that comparison meaningless,
and such loaders are not judged on it. Loaders that shard their data another way (trainwell's own, a per-rank
Subset, a sharded IterableDataset) give each rank other rows and are never flagged. The first-batch
fingerprint hashes the first 65,536 values of each tensor of the batch, its shape and dtype, once per loader.
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Any

import torch

from trainwell.doctor.check import Text, register
from trainwell.doctor.events import BackwardEvent, BatchEvent
from trainwell.doctor.ranks import CrossRankCheck, Verdict
from trainwell.doctor.session import unjudgeable

HASHED_VALUES = 1 << 16
MAX_LOADERS = 20
MAX_ROWS = 8192  # row signatures kept per loader (its first epoch)
ROW_VALUES = 4096  # values of a row that go into its signature
MIN_SHARED = 32  # rows of rank r also read by rank 0 before the overlap counts
MIN_OVERLAP = 0.05  # share of rank r's rows also read by rank 0 ...
OVERLAP_OF_READ = 0.5  # ... and at least half the share of the dataset rank 0 read (what shuffling alone gives)
MAX_REPEATS = 0.1  # rows that repeat within one rank's own epoch: above this share, overlap says nothing


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


def row_signatures(batch: Any) -> torch.Tensor | None:
    """One 64-bit integer per row of the batch's input (its first tensor with a batch dimension): two projections
    of the row's first ``ROW_VALUES`` values, each rounded to float32, packed together. The same rows give the
    same integers on every rank; distinct rows practically never collide. Computed where the batch is (a GPU
    batch is never waited for here: the signatures are read back once, at the end)."""
    x = batch
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    if isinstance(x, dict):
        x = next(iter(x.values()), None)
    if not isinstance(x, torch.Tensor) or x.dim() == 0 or x.shape[0] == 0 or x.is_complex():
        return None
    rows = x.detach().reshape(x.shape[0], -1)[:, :ROW_VALUES].to(torch.float64)
    n = rows.shape[1]
    if n == 0:
        return None
    both = torch.stack([rows.sum(1), rows @ _weights(n, rows.device)], 1).float().contiguous()
    return both.view(torch.int64).reshape(-1)  # (rows, 2) float32 seen as (rows, 1) int64


_WEIGHTS: dict[tuple[int, torch.device], torch.Tensor] = {}


def _weights(n: int, device: torch.device) -> torch.Tensor:
    """Fixed weights in (0.5, 1.5) for the second projection, the same in every process, drawn without touching
    the script's random number generators."""
    key = (n, device)
    if key not in _WEIGHTS:
        drawn = torch.rand(n, generator=torch.Generator().manual_seed(20261201), dtype=torch.float64)
        _WEIGHTS[key] = (0.5 + drawn).to(device)
    return _WEIGHTS[key]


def _weak(obj: Any) -> Any:
    """A weak reference, or a callable that always answers None for an object that takes none."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: None


def loader_sampler(iterator: Any) -> Any:
    """The sampler behind a DataLoader iterator (the one inside its batch sampler, if any)."""
    index_sampler = getattr(iterator, "_index_sampler", None)
    return getattr(index_sampler, "sampler", index_sampler)


@register
class DataNotSharded(CrossRankCheck):
    id = "ddp-data-not-sharded"
    loop_only = True
    severity = "warning"
    summary = "several processes train on the same data (the same first batch, or the same rows in their own orders)"
    text = {
        "en": Text(
            title="Every process trains on the same data",
            message="{seen} ({sampler}), so each process reads the whole dataset instead of its own share. The processes average identical gradients: "
                    "{world} times the compute for the result of one, and an epoch is {world} times longer than "
                    "it looks.",
            fix="give each rank its share: sampler = DistributedSampler(train_set, shuffle=True); "
                "DataLoader(train_set, batch_size=64, sampler=sampler)  # and sampler.set_epoch(epoch) every epoch"),
        "zh": Text(
            title="每个进程都在同样的数据上训练",
            message="{seen}（{sampler}），说明每个进程都在读取整个数据集，"
                    "而不是属于自己的那一份。各进程平均的是相同的梯度：花了 {world} 倍的算力，只得到一个进程的效果，"
                    "而且一个 epoch 实际上比看起来长 {world} 倍。",
            fix="让每个进程只读自己的一份：sampler = DistributedSampler(train_set, shuffle=True); "
                "DataLoader(train_set, batch_size=64, sampler=sampler)  # 并且每个 epoch 调用 sampler.set_epoch(epoch)"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.loaders: dict[int, dict[str, Any]] = {}  # id(dataset) -> its first batch's facts, in order of use
        self.last: int | None = None  # the loader of the latest batch
        self.rows: dict[int, list[torch.Tensor]] = {}  # id(dataset) -> row signatures of its first epoch
        self.counted: dict[int, int] = {}  # id(dataset) -> rows signed so far
        self.epoch_of: dict[int, Any] = {}  # id(dataset) -> weak reference to the iterator of its first epoch

    def on_batch(self, ev: BatchEvent) -> None:
        if not self.session.cross_rank:
            self.session.relax(self, "on_batch", "on_backward")  # one process: no ranks to compare
            return
        if ev.iterator is None or unjudgeable(ev.batch) is not None:  # (a sparse or nested batch: not signed)
            return
        key = id(getattr(ev.iterator, "_dataset", ev.iterator))
        self.last = key
        if key not in self.loaders and len(self.loaders) < MAX_LOADERS:
            dataset = getattr(ev.iterator, "_dataset", None)
            size = len(dataset) if hasattr(dataset, "__len__") else None
            self.loaders[key] = {"order": len(self.loaders), "hash": fingerprint(ev.batch), "trained": False,
                                 "sampler": type(loader_sampler(ev.iterator)).__name__, "where": ev.where,
                                 "size": size}
            self.rows[key] = []
            self.counted[key] = 0
            self.epoch_of[key] = _weak(ev.iterator)
        rows = self.rows.get(key)
        if rows is not None and self.counted[key] < MAX_ROWS and self.epoch_of[key]() is ev.iterator:
            signed = row_signatures(ev.batch)
            if signed is not None:
                rows.append(signed)
                self.counted[key] += signed.shape[0]

    def on_backward(self, ev: BackwardEvent) -> None:
        if not self.session.cross_rank:
            self.session.relax(self, "on_batch", "on_backward")  # one process: no ranks to compare
            return
        if self.last is not None and self.last in self.loaders:
            self.loaders[self.last]["trained"] = True

    def facts(self) -> Any:
        trained = []
        for key, loader in self.loaders.items():
            if loader["trained"]:
                parts = self.rows.get(key)
                rows = torch.cat(parts)[:MAX_ROWS].tolist() if parts else []
                trained.append({**loader, "rows": rows})
        return trained or None

    @classmethod
    def judge(cls, facts: dict[int, Any], world_size: int) -> Verdict | None:
        if len(facts) < world_size:
            return None
        first = facts[min(facts)]
        for i, loader in enumerate(first):
            same = [r for r, fs in facts.items() if i < len(fs) and fs[i]["hash"] == loader["hash"]]
            if len(same) == world_size:
                seen = {"en": f"The first training batch was identical on all {world_size} ranks",
                        "zh": f"第一个训练批次在全部 {world_size} 个进程上完全相同"}
                return Verdict(loader["where"], {"identical_first_batch_on_ranks": same, "sampler": loader["sampler"]},
                               {"world": world_size, "sampler": f"sampler: {loader['sampler']}", "seen": seen}, same)
        for i, loader in enumerate(first):
            shares = _shared_rows(i, facts)
            if shares is not None:
                rank, (read, share) = min(shares.items(), key=lambda kv: kv[1][1])
                seen = {"en": f"Each rank read the same rows in an order of its own: of the {read} rows rank {rank} "
                              f"read in its first epoch, {share:.0%} were read by rank 0 too (with a share per rank, "
                              "none would be)",
                        "zh": f"每个进程以各自的顺序读取了同样的样本：进程 {rank} 在第一个 epoch 读取的 {read} 行中，有 "
                              f"{share:.0%} 也被进程 0 读取过（每个进程读自己的一份时，应当一行都没有）"}
                evidence = {"rows_read_and_share_also_read_by_rank_0": shares, "sampler": loader["sampler"]}
                return Verdict(loader["where"], evidence, {"world": world_size, "sampler": f"sampler: "
                                                           f"{loader['sampler']}", "seen": seen}, sorted(facts))
        return None


def _shared_rows(i: int, facts: dict[int, Any]) -> dict[int, tuple[int, float]] | None:
    """For the i-th training loader: each other rank's (rows read, share of them rank 0 read too); None unless
    every rank shares enough rows with rank 0, or where rows repeat within a rank's own data."""
    if 0 not in facts or len(facts) < 2 or any(i >= len(fs) or "rows" not in fs[i] for fs in facts.values()):
        return None
    own = {r: fs[i]["rows"] for r, fs in facts.items()}
    if any(not rows or 1 - len(set(rows)) / len(rows) > MAX_REPEATS for rows in own.values()):
        return None  # repeated rows within a rank: overlap would say nothing
    base = set(own[0])
    size = facts[0][i].get("size")
    read_share = min(1.0, len(base) / size) if size else 0.0  # what random overlap alone would reach
    shares: dict[int, tuple[int, float]] = {}
    for r, rows in sorted(own.items()):
        if r == 0:
            continue
        unique = set(rows)
        shared = len(unique & base)
        share = shared / len(unique)
        if shared < MIN_SHARED or share < max(MIN_OVERLAP, OVERLAP_OF_READ * read_share):
            return None
        shares[r] = (len(unique), round(share, 3))
    return shares
