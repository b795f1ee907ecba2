"""input-normalization-mismatch: a model that starts from loaded weights is fed inputs normalized otherwise.

The signal is the model's own: a BatchNorm layer keeps the mean and variance of what reached it while its weights
were trained. When the weights were loaded (``doctor/loaded.py``: ``load_state_dict`` before training, or
trainwell's ``model.pretrained``), the statistics of the first BatchNorm layer they came with say what the
pretrained first layer's outputs looked like; the batches now reaching that layer are compared with them. Raw
[0, 255] pixels, [0, 1] pixels or a (0.5, 0.5, 0.5) normalization given to weights trained on ImageNet-normalized
images change the spread of the first layer's output by 3x to 250x, far beyond what another dataset normalized
the same way does. A model trained from scratch has no loaded statistics and is never judged here (raw inputs
there are ``unnormalized-input``'s business). Limits: a model without a BatchNorm layer near its input (ViTs,
ConvNeXt's LayerNorm) is not judged, and neither are weights loaded before the doctor started (inside ``fit``).
"""

from __future__ import annotations

import math

import torch
from torch.nn.modules.batchnorm import _BatchNorm

from trainwell.doctor.check import Check, Text, register, sampled_only
from trainwell.doctor.checks._grads import read_back
from trainwell.doctor.events import ForwardEvent
from trainwell.doctor.lang import pick
from trainwell.doctor.loaded import tracked_norms

_EN_GUESS = {
    "larger": "inputs on a much larger scale than the weights were trained with (raw 0-255 pixels where they "
              "expect normalized ones?)",
    "smaller": "inputs on a smaller scale than the weights were trained with (pixels in [0, 1], or a normalization "
               "such as (0.5, 0.5, 0.5) where the weights expect ImageNet's mean and std?)",
    "shifted": "inputs centred elsewhere than the weights were trained with (a mean left in, or another dataset's "
               "mean subtracted?)",
}
_ZH_GUESS = {
    "larger": "输入的尺度比权重训练时大得多（是否把原始 0-255 像素直接送给了需要归一化输入的权重？）",
    "smaller": "输入的尺度比权重训练时小（是否用了 [0, 1] 像素，或 (0.5, 0.5, 0.5) 之类的归一化，而权重需要 ImageNet 的均值和标准差？）",
    "shifted": "输入的中心与权重训练时不同（是否没有减去均值，或减去了别的数据集的均值？）",
}


@register
class InputNormalizationMismatch(Check):
    id = "input-normalization-mismatch"
    severity = "warning"
    summary = "a model starting from loaded (pretrained) weights gets inputs normalized differently than they were"
    text = {
        "en": Text(
            title="The inputs are not normalized the way the pretrained weights expect",
            message="{model} starts from loaded weights, and its first BatchNorm layer ({layer}) kept the statistics "
                    "of what the pretrained first layer produced. On {hits} of the {checked} batches checked, what "
                    "reaches it now has {spread}x that spread and sits {shift} of those standard deviations from "
                    "that mean: {guess}. The pretrained features respond to inputs unlike any they were trained on, "
                    "so fine-tuning starts far from the pretrained model's quality and must relearn what it knew.",
            fix="normalize the inputs exactly as the weights' training data was, e.g. for torchvision's ImageNet "
                "weights: transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]) after "
                "ToTensor() (weights.transforms() gives the right preprocessing)"),
        "zh": Text(
            title="输入没有按预训练权重期望的方式归一化",
            message="{model} 从加载的权重开始训练，它的第一个 BatchNorm 层（{layer}）记录了预训练时第一层输出的统计量。"
                    "检查的 {checked} 个批次中有 {hits} 个，现在到达这一层的数据离散程度是当时的 {spread} 倍，"
                    "均值偏离了 {shift} 个当时的标准差：{guess}。预训练得到的特征面对的是训练时从未见过的输入，"
                    "微调的起点远低于预训练模型应有的水平，只能重新学习它本来已经会的东西。",
            fix="按权重训练数据的方式归一化输入，例如 torchvision 的 ImageNet 权重："
                "在 ToTensor() 之后加 transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])"
                "（weights.transforms() 给出正确的预处理）"),
    }
    SPREAD = 2.0  # the first layer's output spread (std) this many times larger or smaller than the loaded one's ...
    SHIFT = 2.0  # ... or its mean this many loaded standard deviations away (medians over the channels)
    FIRST_LEAVES = 4  # the BatchNorm must be among the first layers called: what reaches it is the input, rescaled
    LOOK = 10  # batches judged at most: the normalization does not change
    HITS = 3

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.checked = 0
        self.hits = 0
        self.worst: tuple[float, float] = (1.0, 0.0)

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        s = self.session
        if self.reported or self.checked >= self.LOOK or not s.loaded or not ev.leaf_calls:
            return
        first = next(((m, x) for m, x, _ in ev.leaf_calls[:self.FIRST_LEAVES] if isinstance(m, _BatchNorm)), None)
        if first is None:
            return
        norm, x = first
        loaded = s.loaded.statistics(norm)
        if loaded is None or not s.loaded.holds(ev.module) or not isinstance(x, torch.Tensor):
            return
        mean, var = loaded
        if not x.is_floating_point() or x.ndim < 2 or x.shape[1] != mean.numel() or x.numel() // x.shape[1] < 8:
            return
        with s.quiet():
            xd = x.detach().float().transpose(0, 1).reshape(x.shape[1], -1)
            spread = (xd.var(dim=1) / (var.float() + norm.eps)).sqrt().median()
            shift = ((xd.mean(dim=1) - mean.float()).abs() / (var.float() + norm.eps).sqrt()).median()
            spread_v, shift_v = read_back([spread, shift])
        if not (math.isfinite(spread_v) and math.isfinite(shift_v)):
            return
        self.checked += 1
        if spread_v > self.SPREAD or spread_v < 1 / self.SPREAD or shift_v > self.SHIFT:
            self.hits += 1
            if abs(math.log(spread_v)) + shift_v > abs(math.log(self.worst[0])) + self.worst[1]:
                self.worst = (spread_v, shift_v)
        if self.hits >= self.HITS and 2 * self.hits >= self.checked:
            spread_v, shift_v = self.worst
            kind = "larger" if spread_v > self.SPREAD else "smaller" if spread_v < 1 / self.SPREAD else "shifted"
            guess = pick(s.lang, _EN_GUESS[kind], _ZH_GUESS[kind])
            layer = next((n for n, m in ev.module.named_modules() if m is norm), type(norm).__name__)
            self.report(ev.where, {"model": type(ev.module).__name__, "layer": layer, "spread_ratio": spread_v,
                                   "mean_shift_in_stds": shift_v, "batches_off": self.hits,
                                   "batches_checked": self.checked, "loaded_norms": len(tracked_norms(ev.module))},
                        model=type(ev.module).__name__, layer=layer or type(norm).__name__, hits=self.hits,
                        checked=self.checked, spread=f"{spread_v:.3g}", shift=f"{shift_v:.3g}", guess=guess)
