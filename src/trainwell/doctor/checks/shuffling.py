"""data-not-shuffled: training batches that each hold one class, in runs, because the data is in label order.

Judged from the class targets of the losses that ``backward()`` is then called on (cross-entropy /
NLL with one label per sample, binary cross-entropy with 0 / 1 targets): each batch's smallest and
largest label. Other steps only keep the targets (a reference, no device work); they are reduced and
read back together on sampled steps.
Sorted data shows three things together: most batches hold a single class, several different classes
come as such pure batches, and a pure batch is followed by another of the same class (runs, not an
alternation such as a GAN's real / fake batches). Shuffled data with the same class frequencies would
almost never give pure batches, which is checked against the frequencies seen.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register
from trainwell.doctor.events import BackwardEvent, LossEvent

MIN_BATCH = 8  # smaller batches are pure by chance too often
MAX_LABEL = 10_000


@register
class DataNotShuffled(Check):
    id = "data-not-shuffled"
    severity = "warning"
    summary = "training batches each hold a single class: the data is in label order and never shuffled"
    text = {
        "en": Text(
            title="Training data is in label order and not shuffled",
            message="{pure} of {batches} training batches checked held a single class, and class after class came "
                    "in runs ({classes} classes seen this way), so the data is read in label order. The model then "
                    "learns one class for a while, forgets it on the next, and ends up predicting whatever class "
                    "came last; the loss swings and accuracy stays poor.",
            fix="shuffle the training data every epoch: DataLoader(train_set, batch_size=64, shuffle=True)  "
                "# manual loop: idx = torch.randperm(len(x)); x, y = x[idx], y[idx]"),
        "zh": Text(
            title="训练数据按标签排序且没有打乱",
            message="检查的 {batches} 个训练批次中有 {pure} 个只含一个类别，而且类别是一段一段连续出现的"
                    "（以这种方式出现了 {classes} 个类别），说明数据是按标签顺序读取的。模型会先学一阵某个类别，"
                    "换到下一个类别时又把它忘掉，最后倾向于预测最后出现的类别；损失来回波动，准确率上不去。",
            fix="每个 epoch 都打乱训练数据：DataLoader(train_set, batch_size=64, shuffle=True)  "
                "# 手写循环：idx = torch.randperm(len(x)); x, y = x[idx], y[idx]"),
    }

    MIXED_AFTER = 200  # batches read, after which...
    MIXED_SHARE = 0.1  # ...fewer single-class ones than this share means the order is mixed: nothing more to see

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.pending: list[torch.Tensor] = []  # class targets of the losses since the last backward()
        # Per backward: (backward count, [(targets, their version)]): kept, not computed, until a sampled step.
        self.unread: list[tuple[int, list[tuple[torch.Tensor, int]]]] = []
        self.batches: list[tuple[int, int | None]] = []  # (backward count, its class if the batch is pure)
        self.counts: dict[int, int] = {}  # labels seen in pure batches, per class
        self.sizes: list[int] = []
        self.where: str | None = None
        self.done = False

    # Other steps only keep a reference to the targets (no device work); the batches are read on sampled
    # steps, so that a class seen only between sampled steps still counts.
    def on_loss(self, ev: LossEvent) -> None:
        if self.done:
            self.session.relax(self, "on_loss", "on_backward")
            return
        if not torch.is_grad_enabled():
            return
        t = class_targets(ev)
        if t is not None and t.numel() >= MIN_BATCH:
            self.pending.append(t)
            self.where = self.where or ev.where

    def on_backward(self, ev: BackwardEvent) -> None:
        if self.pending:
            pending, self.pending = self.pending, []
            self.unread.append((self.session.backward_count, [(t, t._version) for t in pending]))
            del self.unread[:-200]
        if self.session.sampled and self.unread and not self.done:
            self._read()
            if len(self.batches) >= 12:
                self._judge()
            pure = sum(c is not None for _, c in self.batches)
            if len(self.batches) >= self.MIXED_AFTER and pure < self.MIXED_SHARE * len(self.batches):
                self.done = True  # batches of mixed classes: the data is shuffled (or not sorted by label)

    def _read(self) -> None:
        unread, self.unread = self.unread, []
        # Targets changed in place since (a reused buffer) no longer show their batch: left out.
        kept = [(count, ts) for count, ts in unread if all(t._version == v for t, v in ts)]
        if not kept:
            return
        # Each batch's (smallest, -largest) label: batches of one target tensor of the same size, dtype and
        # device (the usual) in one reduction, the others one by one.
        order: list[int] = []
        bounds: list[torch.Tensor] = []
        groups: dict[tuple[Any, ...], list[int]] = {}
        for i, (_, ts) in enumerate(kept):
            if len(ts) == 1:
                t = ts[0][0]
                groups.setdefault((t.numel(), t.dtype, t.device), []).append(i)
            else:
                lo, hi = torch.aminmax(torch.cat([t.reshape(-1).double() for t, _ in ts]))
                order.append(i)
                bounds.append(torch.stack([lo, -hi]).reshape(1, 2))
        for rows in groups.values():
            lo, hi = torch.stack([kept[i][1][0][0].reshape(-1) for i in rows]).double().aminmax(dim=1)
            order += rows
            bounds.append(torch.stack([lo, -hi], dim=1))
        device = bounds[0].device
        flat = torch.cat([b.to(device) for b in bounds]).tolist()  # one wait for all of them
        values: list[Any] = [None] * len(kept)
        for i, v in zip(order, flat):
            values[i] = v
        for (count, ts), (lo, neg_hi) in zip(kept, values):
            hi, n = -neg_hi, sum(t.numel() for t, _ in ts)
            if lo < 0:
                continue  # labels left out with ignore_index: this batch says nothing
            if lo != round(lo) or hi != round(hi) or hi > MAX_LABEL:
                self.done = True  # soft targets (label smoothing, probabilities), or not class ids
                return
            pure = int(lo) if lo == hi else None
            if pure is not None:
                self.counts[pure] = self.counts.get(pure, 0) + n
            self.batches.append((count, pure))
            self.sizes.append(n)
        del self.batches[:-1000], self.sizes[:-1000]

    def on_end(self) -> None:
        if not self.done and self.unread:
            self._read()
        if not self.done and len(self.batches) >= 8:
            self._judge()

    def _judge(self) -> None:
        pure = [c for _, c in self.batches if c is not None]
        classes = set(pure)
        if len(classes) < 2 or len(pure) < 0.6 * len(self.batches):
            return
        # Adjacent batches (one backward apart) that are both pure: sorted data keeps the class, an
        # alternation (real / fake, task A / task B) switches it.
        pairs = [(a[1], b[1]) for a, b in zip(self.batches, self.batches[1:])
                 if b[0] - a[0] == 1 and a[1] is not None and b[1] is not None]
        same = sum(x == y for x, y in pairs)
        if len(pairs) < 4 or same < 0.75 * len(pairs):
            return
        total = sum(self.counts.values())
        size = sorted(self.sizes)[len(self.sizes) // 2]
        # How often shuffled data would give a pure batch, with the class frequencies of the pure batches
        # (an upper bound: a class that only ever comes mixed makes the data look more lopsided).
        chance = sum((n / total) ** size for n in self.counts.values())
        if chance > 0.2:
            return
        self.done = True
        self.report(self.where, {"batches_checked": len(self.batches), "single_class_batches": len(pure),
                                 "classes_in_single_class_batches": len(classes),
                                 "same_class_as_previous_batch": f"{same}/{len(pairs)}",
                                 "expected_share_if_shuffled": round(chance, 4)},
                    pure=len(pure), batches=len(self.batches), classes=len(classes))


def class_targets(ev: LossEvent) -> torch.Tensor | None:
    """The loss's targets as one class id per sample, or None (regression, soft, token or pixel targets)."""
    inp, t = ev.input, ev.target
    if not (isinstance(inp, torch.Tensor) and isinstance(t, torch.Tensor)) or not inp.requires_grad:
        return None
    if ev.name in ("cross_entropy", "nll_loss"):
        if t.ndim != 1 or t.is_floating_point() or inp.ndim != 2:
            return None
        return t.detach()
    if ev.name in ("binary_cross_entropy", "binary_cross_entropy_with_logits"):
        if t.ndim == 2 and t.shape[1] == 1:
            t = t[:, 0]
        if t.ndim != 1:
            return None
        return t.detach()  # float 0 / 1 targets; soft targets are turned away when read
    return None
