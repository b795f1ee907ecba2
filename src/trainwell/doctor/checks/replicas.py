"""replicas-diverged: data-parallel processes whose copies of the model differ after the same optimizer step.

Judged across ranks (``CrossRankCheck``): after ``optimizer.step()`` on the doctor's sampled steps (the same
step numbers on every rank), each rank takes a checksum of the optimizer's parameters, the sum and the sum of
squares in float64, and keeps it with the step number. Replicas that DDP keeps in sync are bit-for-bit equal, so
any relative difference above ``TOLERANCE`` at a step all ranks reached means the copies went apart: a model not
wrapped in DistributedDataParallel, wrapped on some ranks only, or changed per rank after the step. Optimizers
are matched by the order of their first step and the shapes of their parameters (an optimizer over one rank's
shard, as inside ZeroRedundancyOptimizer, matches no other rank's); sharded parameters (FSDP's DTensors)
differ by design and are left out. The ranks never wait for one another: the checksums are compared after the run.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

from trainwell.doctor.check import Text, register, sampled_only
from trainwell.doctor.events import StepEvent
from trainwell.doctor.ranks import CrossRankCheck, Verdict

TOLERANCE = 1e-6
MAX_RECORDS = 40  # checksums kept per optimizer


def _sharded(params: list[torch.Tensor]) -> bool:
    if not torch.distributed.is_available():
        return False
    from torch.distributed.tensor import DTensor

    return any(isinstance(p, DTensor) for p in params)


def _differ(a: list[float], b: list[float]) -> bool:
    return any(abs(x - y) > TOLERANCE * max(abs(x), abs(y), 1e-12) for x, y in zip(a, b))


@register
class ReplicasDiverged(CrossRankCheck):
    id = "replicas-diverged"
    loop_only = True
    severity = "error"
    summary = "the processes' copies of the model differ after the same optimizer step (not kept in sync by DDP)"
    text = {
        "en": Text(
            title="The model's copies on different processes have drifted apart",
            message="After optimizer step {step} the parameters on rank {a} and rank {b} are no longer equal "
                    "(checksums {sum_a} and {sum_b}). Data-parallel training needs every process to hold the same "
                    "weights: here each process trains its own model, so the run ends with {world} different models "
                    "and the one you save depends on the rank that saves it.",
            fix="wrap the model on every rank before training and step only through the wrapper's gradients: "
                "model = DistributedDataParallel(model)  # and change weights the same way on every rank"),
        "zh": Text(
            title="不同进程上的模型副本已经不一致",
            message="在第 {step} 次 optimizer step 之后，进程 {a} 和进程 {b} 上的参数已经不相等（校验和分别为 {sum_a} "
                    "和 {sum_b}）。数据并行训练要求每个进程持有相同的权重：现在每个进程各自训练自己的模型，"
                    "最后会得到 {world} 个不同的模型，保存下来的是哪一个取决于由哪个进程保存。",
            fix="在每个进程上都在训练之前包装模型，并且只通过包装后的梯度更新："
                "model = DistributedDataParallel(model)  # 修改权重时所有进程都要做同样的修改"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.order: dict[int, str] = {}  # id(optimizer) -> its key: "<order of first step>:<hash of its shapes>"
        self.sums: dict[str, dict[str, list[float]]] = {}  # key -> {step: [sum, sum of squares]}
        self.where: dict[str, str | None] = {}

    @sampled_only
    def on_step(self, ev: StepEvent) -> None:
        if not self.session.cross_rank:
            return
        params = [p for g in ev.optimizer.param_groups for p in g["params"]]
        if not params or _sharded(params):
            return
        key = self.order.get(id(ev.optimizer))
        if key is None:
            shapes = hashlib.blake2b(str([tuple(p.shape) for p in params]).encode(), digest_size=6).hexdigest()
            key = self.order[id(ev.optimizer)] = f"{len(self.order)}:{shapes}"
        sums = self.sums.setdefault(key, {})
        if len(sums) >= MAX_RECORDS:
            return
        with torch.no_grad():
            parts = [torch.stack([p.detach().double().sum(), p.detach().double().square().sum()]) for p in params]
            sums[str(self.session.step)] = torch.stack([x.to(parts[0].device) for x in parts]).sum(0).tolist()
        self.where.setdefault(key, ev.where)

    def facts(self) -> Any:
        return {"sums": self.sums, "where": self.where} if self.sums else None

    @classmethod
    def judge(cls, facts: dict[int, Any], world_size: int) -> Verdict | None:
        ranks = sorted(facts)
        first = facts[ranks[0]]
        for key, sums in first["sums"].items():
            others = [r for r in ranks[1:] if key in facts[r]["sums"]]
            for step in sorted(sums, key=int):
                for r in others:
                    theirs = facts[r]["sums"][key].get(step)
                    if theirs is not None and _differ(sums[step], theirs):
                        return Verdict(first["where"].get(key),
                                       {"step": int(step) + 1, "checksums": {ranks[0]: sums[step], r: theirs}},
                                       {"step": int(step) + 1, "a": ranks[0], "b": r, "sum_a": f"{sums[step][0]:.10g}",
                                        "sum_b": f"{theirs[0]:.10g}", "world": world_size}, ranks)
        return None
