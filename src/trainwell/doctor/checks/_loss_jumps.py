"""A loss that never settles, and whether the batches' classes could explain it.

Used by ``lr-too-high`` for a learning rate too high to blow the loss up but high enough that the run
never settles. On the digits MLP of the sweeps, Adam at 30x its good rate leaves a loss that, in the last
quarter of the run, jumps to over 2x its recent level and to a quarter of the starting loss or more on
5-12 of 88 batches (6 seeds), and at 50x on 12-19; good rates, dropout, batch norm, CNNs, SGD up to its
edge of stability and wrong labels: at most 5. At 70x the loss sits higher, jumps less, and jumps above
the untrained model's first loss 6-8 times in the second half (good rates: at most once). A relapse must
be a jump: a run whose loss never got far below its start (a rate too low, labels that cannot be learned)
has half its losses above the first one. The runs: ``benchmarks/lr_settle_runs.py``.

Data in label order makes the same jumps for another reason: each new class arrives on a model that
has just fitted the previous ones. So the jumps count only when the training batches hold the mix of
classes that shuffled batches would: ``LabelMix`` measures that on the targets of sampled steps.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass

import torch

JUMP = 2.0  # a loss this many times the median of the ...
BEFORE = 20  # ... losses just before it is a jump, ...
FLOOR = 0.25  # ... when it also reaches this share of the starting loss (not one hard sample, not dropout's noise)
SHARE = 0.08  # a run whose last quarter jumps this often ...
COUNT = 8  # ... and at least this many times; or
RELAPSES = 3  # a run with this many jumps in its second half above the very first loss (worse than untrained)
MIN_LOSSES = 160  # a last quarter of 40 losses or more
MIXED = 0.7  # batches hold at least this share of the distinct classes that shuffled batches would
MIN_BATCHES = 8  # label batches seen before the mix is judged


@dataclass(frozen=True)
class Unsettled:
    form: str  # "jumps": frequent jumps in the last quarter; "relapse": jumps above the start in the second half
    count: int
    checked: int  # losses looked at (the last quarter, or the second half)
    highest: float  # the largest of them


def counts(losses: list[float], start: float) -> tuple[int, int]:
    """(jumps of the last quarter, relapses of the second half) of a run's losses."""
    n = len(losses)
    half, last = n // 2, n - n // 4
    # Each loss of the second half against the median of the 20 before it: a jump lands far above its level.
    jumped = [losses[i] > JUMP * statistics.median(losses[max(0, i - BEFORE):i]) for i in range(half, n)]
    jumps = sum(j and x >= FLOOR * start for j, x in zip(jumped[last - half:], losses[last:]))
    # A relapse is a jump too: a run that never got far below its start has half its losses above the first.
    relapses = sum(j and x > start for j, x in zip(jumped, losses[half:]))
    return jumps, relapses


def unsettled(losses: list[float], start: float) -> Unsettled | None:
    """How the loss of a run that never settled shows it, or None (also for short or non-finite runs)."""
    n = len(losses)
    if n < MIN_LOSSES or not (math.isfinite(start) and start > 0):
        return None
    half, last = n // 2, n - n // 4
    if not all(math.isfinite(x) and x >= 0 for x in losses[half - BEFORE:]):
        return None
    jumps, relapses = counts(losses, start)
    if relapses >= RELAPSES:
        return Unsettled("relapse", relapses, n - half, max(losses[half:]))
    if jumps >= COUNT and jumps >= SHARE * (n - last):
        return Unsettled("jumps", jumps, n - last, max(losses[last:]))
    return None


class LabelMix:
    """How many distinct classes the training batches hold, against what shuffled batches of the same
    size and class frequencies would hold. ``add`` reads one batch's targets (a wait on the device):
    call it on sampled steps only."""

    def __init__(self) -> None:
        self.distinct: list[int] = []
        self.sizes: list[int] = []
        self.counts: dict[int, int] = {}
        self.off = False  # targets that are not class ids (soft, negative, huge)

    def add(self, target: torch.Tensor) -> None:
        if self.off:
            return
        t = target.detach().reshape(-1)
        n = t.numel()
        if n == 0:
            return
        if n <= self.COUNT_HERE:  # one label per sample: a batch's few are read back and counted here
            found = Counter(t.tolist())
        else:
            values, counts = torch.unique(t, return_counts=True)
            labels, numbers = torch.stack([values.double(), counts.double()]).tolist()  # one wait for both
            found = Counter(dict(zip(labels, numbers)))
        # (NaN and inf fail the range test: not class ids)
        if not all(0 <= v <= 1_000_000 and v == int(v) for v in found):
            self.off = True
            return
        self.distinct.append(len(found))
        self.sizes.append(n)
        for v, c in found.items():
            self.counts[int(v)] = self.counts.get(int(v), 0) + int(c)

    COUNT_HERE = 16384  # targets up to this many are counted in Python (torch.unique costs more for a batch)

    def ratio(self) -> float | None:
        """Mean distinct classes per batch over the mean that shuffled batches would hold; None when too
        few batches were seen or the targets are not class ids."""
        if self.off or len(self.distinct) < MIN_BATCHES:
            return None
        total = sum(self.counts.values())
        freqs = [c / total for c in self.counts.values()]
        # Batches share a few sizes (a short last one): each size once, whatever the number of classes.
        sizes = Counter(self.sizes)
        expected = sum(k * sum(1 - (1 - p) ** b for p in freqs) for b, k in sizes.items()) / len(self.sizes)
        return statistics.fmean(self.distinct) / expected

    def mixed(self) -> bool:
        r = self.ratio()
        return r is not None and r >= MIXED
