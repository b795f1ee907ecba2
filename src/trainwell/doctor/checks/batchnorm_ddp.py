"""batchnorm-small-batch-per-process: BatchNorm normalizing fewer than 8 samples per process, without SyncBatchNorm.

Under several processes (``WORLD_SIZE`` > 1) each process's BatchNorm computes its mean and variance over its
own share of the batch only. Judged on sampled training forwards: a BatchNorm layer (not ``SyncBatchNorm``) in
training mode whose input holds fewer than ``MIN_BATCH`` samples. The statistics of so few samples are noisy,
which hurts accuracy and makes the running statistics unreliable. Reported when that holds for most of the
sampled forwards and at least ``REPEATS`` of them (a short last batch of an epoch alone is not enough).
"""

from __future__ import annotations

from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.events import ForwardEvent
from trainwell.machine import is_distributed, world_size_from_env

MIN_BATCH = 8
REPEATS = 3


@register
class BatchNormSmallBatchPerProcess(Check):
    id = "batchnorm-small-batch-per-process"
    severity = "info"
    summary = "BatchNorm sees fewer than 8 samples per process and is not SyncBatchNorm"
    text = {
        "en": Text(
            title="BatchNorm normalizes only {batch} samples per process",
            general="BatchNorm normalizes very few samples per process",
            message="Each of the {world} processes runs BatchNorm ({layer}) on its own {batch} samples: the batch "
                    "statistics of so few samples are noisy, which usually costs accuracy, and the running "
                    "statistics used at evaluation become unreliable.",
            fix="use statistics over all processes (GPU): model = nn.SyncBatchNorm.convert_sync_batchnorm(model) "
                "before DistributedDataParallel(model); or a larger per-process batch, or GroupNorm / LayerNorm"),
        "zh": Text(
            title="每个进程的 BatchNorm 只归一化 {batch} 个样本",
            general="每个进程的 BatchNorm 归一化的样本很少",
            message="{world} 个进程各自只用自己的 {batch} 个样本运行 BatchNorm（{layer}）：这么少样本的批统计量噪声"
                    "很大，通常会降低准确率，评估时使用的 running 统计量也变得不可靠。",
            fix="在所有进程上统计（GPU）：在 DistributedDataParallel(model) 之前 "
                "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)；或者加大每个进程的批大小，或改用 "
                "GroupNorm / LayerNorm"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.small = 0
        self.forwards = 0

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.reported or not ev.grad_enabled or not ev.leaf_calls:
            return
        norms = [(m, x) for m, x, _ in ev.leaf_calls
                 if isinstance(m, _BatchNorm) and not isinstance(m, nn.SyncBatchNorm) and m.training
                 and getattr(x, "ndim", 0) >= 2]
        if not norms or not is_distributed():  # (the environment is read only for a model with BatchNorm)
            return
        self.forwards += 1
        layer, x = min(norms, key=lambda n: n[1].shape[0])
        if x.shape[0] >= MIN_BATCH:
            return
        self.small += 1
        if self.small >= REPEATS and self.small * 2 > self.forwards:
            self.report(ev.where, {"per_process_batch": int(x.shape[0]), "world_size": world_size_from_env()},
                        batch=int(x.shape[0]), world=world_size_from_env(), layer=type(layer).__name__)
