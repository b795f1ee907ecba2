"""Advice that fits trainwell's own loop: inside ``trainwell train`` and ``fit(doctor=True)`` a finding names the
setting that changes it, not PyTorch code the user never wrote.

A check words its fix for a script: ``optimizer = torch.optim.SGD(model.parameters(), lr=0.5)``,
``nn.init.zeros_(layer.bias)``, "stop early". Inside ``trainwell train`` the optimizer, the built-in model and the
loop are trainwell's, and the line a check would point at is the console script's (``.venv/bin/trainwell:6``).
``ADVICE`` says, per check that fires in trainwell's loop, which setting changes it (the flag and config key of
``trainwell train``, the keyword of ``fit``) and what to set it to; ``adapt`` rewrites a finding's ``where`` and
``fix`` from it and records the setting in its evidence (``"setting"``). What a check says about the user's own
code (their model class, their dataset) keeps the check's words: only its location changes, from the console
script to the option that names that code. A run that already stops early is not told to stop early; one that
already clips gradients is told its clipping value, not to clip.
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from trainwell.doctor.findings import Finding
from trainwell.doctor.lang import pick


@dataclass(frozen=True)
class Loop:
    """What the doctor knows of the run it watches inside trainwell's loop."""

    command: str  # "train" (``trainwell train``: flags and config keys) or "fit" (``fit(...)`` keywords)
    lr: float | None = None  # the optimizer's (peak) learning rate
    builtin_model: bool = False  # the model is one of trainwell's (mlp, cnn, lstm, gru), chosen by model.name
    model_name: str | None = None  # model.name: a built-in's name or the user's package.module:Class
    activation: str | None = None  # model.activation of a built-in
    early_stop: int | None = None  # the patience, when early stopping is on
    grad_clip: float | None = None
    precision: str = "32"
    batch_size: int | None = None
    # The lines ("path:line") of the code that called trainwell's loop (the console script, a script calling fit):
    # a check that walks out of trainwell's frames to find "the user's line" lands on one of them.
    callers: frozenset[str] = frozenset()
    extra: dict[str, Any] = field(default_factory=dict)


def caller_lines(start: FrameType | None = None) -> frozenset[str]:
    """The user's lines on the stack now ("path:line", as ``where`` writes them): called from inside trainwell's loop,
    the code that started it."""
    from trainwell.doctor.where import _is_user, _location

    frame = start or sys._getframe(1)
    lines = set()
    while frame is not None:
        if _is_user(frame.f_code.co_filename):
            lines.add(_location(frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return frozenset(lines)


def loop_from(trainer: Any, config: Any = None, callers: frozenset[str] = frozenset()) -> Loop:
    """The ``Loop`` of a trainer (and of the ``trainwell train`` config it was built from, when given)."""
    groups = getattr(getattr(trainer, "optimizer", None), "param_groups", None) or [{}]
    lr = groups[0].get("initial_lr", groups[0].get("lr"))
    if isinstance(lr, (int, float)) and not isinstance(lr, bool) and math.isfinite(lr):
        lr = float(lr)
    else:
        lr = None
    stop = getattr(trainer, "early_stop", None)
    patience = getattr(stop, "patience", None) if stop is not None else None
    common = {"lr": lr, "early_stop": patience, "grad_clip": getattr(trainer, "grad_clip", None), "callers": callers}
    if config is None:
        return Loop("fit", **common)
    name = str(config.model.name)
    return Loop("train", builtin_model=":" not in name, model_name=name, activation=config.model.activation,
                precision=str(config.train.precision), batch_size=config.train.batch_size
                if isinstance(config.train.batch_size, int) else None, **{**common, "lr": _config_lr(config, lr)})


def _config_lr(config: Any, lr: float | None) -> float | None:
    value = config.train.lr
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else lr


# Where a finding points (per command) and the words of its fix. Placeholders: {lr} (the configured rate), {lower} and
# {higher} (the check's suggested rate, carried over to the configured one, else a tenth / ten times it),
# {clip_advice}, {stop_advice}, {overfit_where}, {overfit_keyword}, {activation}, {model}, {precision_hint}; a fix of
# None keeps the check's own words.
@dataclass(frozen=True)
class Advice:
    train_where: str
    fit_where: str
    train_fix: tuple[str, str] | None  # (en, zh)
    fit_fix: tuple[str, str] | None
    builtin_only: bool = False  # the advice is about trainwell's built-in model: a user's model keeps the check's


_LR_WHERE = ("--lr (train.lr)", "fit(lr=...)")
ADVICE: dict[str, Advice] = {
    "lr-too-high": Advice(
        *_LR_WHERE,
        ("lower the learning rate: --lr {lower} (now {lr}), or --lr auto to let the learning-rate finder pick it",
         "调低学习率：--lr {lower}（当前 {lr}），或用 --lr auto 让学习率查找器来选"),
        ("pass a lower rate: fit(..., lr={lower}) (now {lr}), or lr=\"find\" to let the learning-rate finder pick it",
         "传入更低的学习率：fit(..., lr={lower})（当前 {lr}），或用 lr=\"find\" 让学习率查找器来选")),
    "lr-too-high-for-finetuning": Advice(
        "--lr (train.lr), --set train.finetune.backbone_lr", "fit(lr=...)",
        ("fine-tune at a lower rate: --lr {lower} (now {lr}), or keep the head's rate and lower the pretrained "
         "backbone's: --set train.finetune.backbone_lr=0.1 (the default is 0.3)",
         "用更低的学习率微调：--lr {lower}（当前 {lr}），或者保持分类头的学习率、降低预训练主干的："
         "--set train.finetune.backbone_lr=0.1（默认 0.3）"),
        ("fine-tune at a lower rate: fit(..., lr={lower}) (now {lr}), or give the pretrained part a smaller rate in "
         "your own optimizer's parameter groups",
         "用更低的学习率微调：fit(..., lr={lower})（当前 {lr}），或者在自己的优化器参数组里给预训练部分更小的学习率")),
    # trainwell's loop calls model.train() at every epoch's start: a model frozen by its user keeps its BatchNorm
    # statistics by overriding train() (trainwell's own recipe, train.finetune.freeze_epochs, does this itself).
    "frozen-batchnorm-training": Advice(
        "--model {model} (model.name)", "fit(model=...)",
        ("keep the frozen part in eval mode inside the model, since the loop calls model.train() every epoch: "
         "def train(self, mode=True): super().train(mode); self.backbone.eval(); return self  # in your model class",
         "循环每个 epoch 都会调用 model.train()，所以要在模型内部让冻结的部分保持 eval 模式："
         "def train(self, mode=True): super().train(mode); self.backbone.eval(); return self  # 写在你的模型类里"),
        ("keep the frozen part in eval mode inside the model, since fit calls model.train() every epoch: "
         "def train(self, mode=True): super().train(mode); self.backbone.eval(); return self  # in your model class",
         "fit 每个 epoch 都会调用 model.train()，所以要在模型内部让冻结的部分保持 eval 模式："
         "def train(self, mode=True): super().train(mode); self.backbone.eval(); return self  # 写在你的模型类里")),
    "lr-too-low": Advice(
        *_LR_WHERE,
        ("raise the learning rate: --lr {higher} (now {lr}), or --lr auto to let the learning-rate finder pick it",
         "调高学习率：--lr {higher}（当前 {lr}），或用 --lr auto 让学习率查找器来选"),
        ("pass a higher rate: fit(..., lr={higher}) (now {lr}), or lr=\"find\"",
         "传入更高的学习率：fit(..., lr={higher})（当前 {lr}），或用 lr=\"find\"")),
    "loss-not-decreasing": Advice(
        *_LR_WHERE,
        ("let the learning-rate finder pick the rate: --lr auto (now {lr}); if the loss still does not move, run "
         "`trainwell doctor` with the same options: its overfit test tells a model that cannot learn from a rate "
         "that is off",
         "让学习率查找器来选学习率：--lr auto（当前 {lr}）；如果损失仍然不动，用同样的选项运行 `trainwell doctor`："
         "它的过拟合测试能分辨是模型学不会还是学习率不对"),
        ("let the learning-rate finder pick the rate: fit(..., lr=\"find\") (now {lr}); check that the labels "
         "match the inputs and that the loss suits the task",
         "让学习率查找器来选学习率：fit(..., lr=\"find\")（当前 {lr}）；并检查标签与输入是否对应、损失函数是否适合任务")),
    "params-not-updating": Advice(
        *_LR_WHERE,
        ("check the learning rate: --lr {lr} is too small to change the weights; try --lr auto",
         "检查学习率：--lr {lr} 太小，权重几乎不变；试试 --lr auto"),
        None),
    "nonfinite-loss": Advice(
        "--lr (train.lr), --set train.grad_clip", "fit(lr=..., grad_clip=...)",
        ("lower the learning rate (--lr {lower}, now {lr}) and cap each step: --set train.grad_clip=1.0"
         "{precision_hint}",
         "调低学习率（--lr {lower}，当前 {lr}）并限制每一步：--set train.grad_clip=1.0{precision_hint}"),
        ("lower the learning rate (fit(..., lr={lower}), now {lr}) and cap each step: fit(..., grad_clip=1.0)",
         "调低学习率（fit(..., lr={lower})，当前 {lr}）并限制每一步：fit(..., grad_clip=1.0)")),
    "exploding-gradients": Advice(
        "--set train.grad_clip", "fit(grad_clip=...)",
        ("{clip_advice}, and lower the learning rate if it persists (--lr {lower}, now {lr})",
         "{clip_advice}，如果仍然出现就调低学习率（--lr {lower}，当前 {lr}）"),
        ("{clip_advice}, and lower the learning rate if it persists (fit(..., lr={lower}), now {lr})",
         "{clip_advice}，如果仍然出现就调低学习率（fit(..., lr={lower})，当前 {lr}）")),
    "dead-relu": Advice(
        "--set model.activation", "fit(lr=...)",
        ("use an activation that cannot die: --set model.activation=leaky_relu (or gelu), and a lower rate if the "
         "loss jumps (--lr {lower}, now {lr})",
         "换成不会死亡的激活函数：--set model.activation=leaky_relu（或 gelu），如果损失跳动再调低学习率"
         "（--lr {lower}，当前 {lr}）"),
        None, builtin_only=True),
    "saturated-activations": Advice(
        "--set model.activation", "fit(model=...)",
        ("use an activation that does not saturate: --set model.activation=relu (now {activation})",
         "换成不会饱和的激活函数：--set model.activation=relu（当前 {activation}）"),
        None, builtin_only=True),
    "vanishing-gradients": Advice(
        "--set model.activation", "fit(model=...)",
        ("use an activation whose gradient does not vanish: --set model.activation=relu (now {activation}); "
         "the cnn keeps BatchNorm on with model.batch_norm=true",
         "换成梯度不会消失的激活函数：--set model.activation=relu（当前 {activation}）；cnn 保持 model.batch_norm=true"),
        None, builtin_only=True),
    "overfitting": Advice(
        "{overfit_where}", "fit({overfit_keyword}=...)",
        ("{stop_advice}regularise: --set model.dropout=0.3, --set train.weight_decay=1e-4 (with --optimizer adamw), "
         "more data, or for images --set data.augment=shift",
         "{stop_advice}加正则化：--set model.dropout=0.3、--set train.weight_decay=1e-4（配合 --optimizer adamw）、"
         "更多数据，图像数据可用 --set data.augment=shift"),
        ("{stop_advice}regularise: fit(..., weight_decay=1e-4), Dropout in your model, or more data",
         "{stop_advice}加正则化：fit(..., weight_decay=1e-4)、在模型里加 Dropout，或更多数据")),
    "dataloader-bottleneck": Advice(
        "--set data.num_workers", "fit(train_data=...)",
        ("load in parallel: --set data.num_workers=4 (worker processes that prepare the next batches)",
         "并行加载：--set data.num_workers=4（用多个进程提前准备后面的批次）"),
        None),
    "batchnorm-small-batch-per-process": Advice(
        "--set model.sync_bn", "fit(batch_size=...)",
        ("compute BatchNorm's statistics over all processes: --set model.sync_bn=true, or a larger --batch-size",
         "在所有进程上统计 BatchNorm：--set model.sync_bn=true，或增大 --batch-size"),
        ("use a larger batch: fit(..., batch_size=...)", "增大批次：fit(..., batch_size=...)")),
    "oom": Advice(
        "--batch-size (train.batch_size)", "fit(batch_size=...)",
        ("use less memory: a smaller --batch-size (or --batch-size auto), the same batch in micro-batches with "
         "--accumulate 4, or --precision bf16-mixed",
         "减少内存占用：更小的 --batch-size（或 --batch-size auto）、用 --accumulate 4 把同样的批次分成小批，"
         "或 --precision bf16-mixed"),
        ("use less memory: fit(..., batch_size=...) smaller, fit(..., accumulate=4), or precision=\"bf16-mixed\"",
         "减少内存占用：更小的 fit(..., batch_size=...)、fit(..., accumulate=4)，或 precision=\"bf16-mixed\"")),
}
# Findings about the data: they point at the data option; the fix is the check's (the data is the user's).
DATA_WHERE = ("--data (data.name)", "fit(train_data=...)")
DATA_CHECKS = frozenset({"labels-off-by-one", "split-leakage", "nonfinite-input", "unnormalized-input",
                         "data-not-shuffled", "input-normalization-mismatch"})
# Findings about the model's own code: they point at the model option (a user's class), the fix is the check's.
MODEL_WHERE = ("--model {model} (model.name)", "fit(model=...)")

_RATE = re.compile(r"lr\s*=\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)")


def adapt(finding: Finding, loop: Loop, lang: str) -> Finding:
    """Rewrite ``finding`` in place for trainwell's loop (see the module's docstring); returns it."""
    advice = ADVICE.get(finding.id)
    command = 0 if loop.command == "train" else 1
    values = _values(finding, loop, lang)
    setting: str | None = None
    if advice is not None and not (advice.builtin_only and not loop.builtin_model):
        setting = (advice.train_where, advice.fit_where)[command].format(**values)
        fix = (advice.train_fix, advice.fit_fix)[command]
        flag = setting.split()[0]
        if fix is not None and not (flag.startswith("--") and flag in (finding.fix or "")):
            # (a check that already words its fix in trainwell's flags, as oom does from the run's config, keeps it)
            finding.fix = pick(lang, *fix).format(**values)
    elif finding.id in DATA_CHECKS:
        setting = DATA_WHERE[command]
    elif loop.command == "train" and not loop.builtin_model and loop.model_name:
        setting = MODEL_WHERE[0].format(**values)
    if setting is not None:
        finding.evidence = {**finding.evidence, "setting": setting}
    if loop.command == "train" and (finding.where is None or finding.where in loop.callers
                                    or launcher_line(finding.where)):
        finding.where = setting  # the flag / config key, never the console script's line
    return finding


def launcher_line(where: str) -> bool:
    """Whether ``where`` ("path:line") is the line of the program that started Python (trainwell's console script)."""
    path = where.rpartition(":")[0]
    if not path or not sys.argv or not sys.argv[0]:
        return False
    try:
        return os.path.realpath(path) == os.path.realpath(sys.argv[0])
    except (OSError, ValueError):
        return False


def _values(finding: Finding, loop: Loop, lang: str) -> dict[str, str]:
    zh = lang == "zh"
    seen = finding.evidence.get("lr") if isinstance(finding.evidence.get("lr"), (int, float)) else None
    lr = loop.lr or seen  # the configured rate: a warm-up or schedule may have moved the one the check saw
    rate = finding.evidence.get("suggested_lr")
    if not isinstance(rate, (int, float)):
        suggested = _RATE.search(finding.fix or "")  # (a check that names its rate only in its fix)
        rate = float(suggested.group(1)) if suggested else None
    if rate is not None and seen and lr and seen != lr:
        rate = rate * lr / seen  # the check's cut, applied to the configured rate
    lower = rate if rate is not None and lr is not None and rate < lr else (lr / 10 if lr else None)
    higher = rate if rate is not None and lr is not None and rate > lr else (lr * 10 if lr else None)
    if loop.grad_clip:
        clip = (f"clipping is on (grad_clip {loop.grad_clip:g}): lower it, e.g. to {loop.grad_clip / 2:g}" if not zh
                else f"梯度裁剪已开启（grad_clip {loop.grad_clip:g}）：把它调小，例如 {loop.grad_clip / 2:g}")
        if loop.command == "train":
            clip += f" (--set train.grad_clip={loop.grad_clip / 2:g})"
    elif loop.command == "train":
        clip = "cap the gradient norm: --set train.grad_clip=1.0" if not zh else "限制梯度范数：--set train.grad_clip=1.0"
    else:
        clip = "cap the gradient norm: fit(..., grad_clip=1.0)" if not zh else "限制梯度范数：fit(..., grad_clip=1.0)"
    if loop.early_stop:
        stop = (f"early stopping is on already (patience {loop.early_stop}) and best.pt keeps the best epoch's "
                "weights; to stop the rise itself, " if not zh else
                f"早停已经开启（patience {loop.early_stop}），best.pt 保存的是最好那个 epoch 的权重；要阻止验证损失上升，")
    elif loop.command == "train":
        stop = ("stop when it stops improving: --early-stop 5 (best.pt keeps the best epoch's weights), and "
                if not zh else "不再提升就停止：--early-stop 5（best.pt 保存最好那个 epoch 的权重），并且")
    else:
        stop = ("stop when it stops improving: fit(..., early_stop=5), and " if not zh
                else "不再提升就停止：fit(..., early_stop=5)，并且")
    hint = ""
    if loop.precision == "16-mixed":
        hint = (", or train in --precision bf16-mixed (float16's range is small)" if not zh
                else "，或改用 --precision bf16-mixed（float16 的取值范围小）")
    return {"lr": _num(lr), "lower": _num(lower), "higher": _num(higher), "clip_advice": clip,
            "stop_advice": stop, "overfit_where": "--set model.dropout" if loop.early_stop else
            "--early-stop (train.early_stop.patience)", "overfit_keyword": "weight_decay" if loop.early_stop
            else "early_stop", "activation": loop.activation or "-", "model": loop.model_name or "-",
            "precision_hint": hint}


def _num(v: float | None) -> str:
    return "?" if v is None else f"{v:.3g}"
