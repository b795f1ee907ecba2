"""Explainers for out-of-memory errors: where it ran out and the remedies in order."""

from __future__ import annotations

import os
from typing import Any

from trainwell.doctor.checks._error_parsing import (Context, Parsed, describe, human_bytes, machine_memory, to_bytes)
from trainwell.doctor.checks._error_base import Explanation, ErrorCheck, Words


_REMEDIES: dict[str, tuple[Words, Words]] = {
    "forward": (("Running the model on this batch needs more memory than is free.", "在这个 batch 上运行模型需要的内存超过了可用内存。"),
                ("lower the batch size (e.g. batch_size=16) or the input size (image resolution, sequence length); for "
                 "evaluation, run it under with torch.no_grad(): which stores no activations",
                 "减小 batch 大小（例如 batch_size=16）或输入大小（图像分辨率、序列长度）；评估时放在 with torch.no_grad(): "
                 "下运行，不保存激活值")),
    "backward": (("The gradients plus the activations the forward pass kept for backward do not fit.",
                  "梯度加上前向传播为反向传播保留的激活值放不下。"),
                 ("use gradient accumulation (a smaller batch, loss / k, optimizer.step() every k batches), activation "
                  "checkpointing (torch.utils.checkpoint.checkpoint), or mixed precision: with torch.autocast('cuda', "
                  "dtype=torch.bfloat16): ...",
                  "使用梯度累积（更小的 batch，loss / k，每 k 个 batch 调一次 optimizer.step()）、激活检查点"
                  "（torch.utils.checkpoint.checkpoint），或混合精度：with torch.autocast('cuda', dtype=torch.bfloat16): ...")),
    "step": (("The optimizer's state (Adam keeps two extra values per weight) does not fit next to the model.",
              "优化器状态（Adam 为每个权重多存两个值）和模型一起放不下。"),
             ("use a smaller model, an optimizer with less state (SGD with momentum), or mixed precision",
              "使用更小的模型、状态更少的优化器（带动量的 SGD），或混合精度")),
    "building": (("The layer being created is itself too large for the memory.", "正在创建的层本身就超出了内存。"),
                 ("check the sizes it is built with (e.g. a vocabulary size taken from the largest raw id, or "
                  "in_features from a whole image): nn.Embedding(n, d) stores n x d weights, "
                  "nn.Linear(n_in, n_out) n_in x n_out",
                  "检查建层用的大小（例如用最大的原始 id 当词表大小，或用整张图像算 in_features）：nn.Embedding(n, d) "
                  "要存 n x d 个权重，nn.Linear(n_in, n_out) 要存 n_in x n_out 个")),
    "elsewhere": (("A tensor created or moved at that line is larger than the free memory.", "在那一行创建或移动的张量超过了可用内存。"),
                  ("check the size computed for it, and move data to the device batch by batch (a DataLoader) instead "
                   "of all at once", "检查它的大小是怎么算出来的，并按 batch 把数据移到设备上（用 DataLoader），不要一次全部移过去")),
}


_RUN_FILE = os.path.join("trainwell", "app", "run.py")
_TRAINER_FILE = os.path.join("trainwell", "engine", "trainer.py")


def _run_config(ctx: Context) -> Any:
    """The config of the ``trainwell train`` run that was training when memory ran out (None for a user's own
    script, ``fit``, or trainwell's evaluation passes, whose batch size the flags do not set)."""
    if not ctx.frames or any(f.f_code.co_name == "evaluate" and f.f_code.co_filename.endswith(_TRAINER_FILE)
                             for f in ctx.frames):
        return None
    frame = ctx.frames[0].f_back  # the traceback starts where the error was caught: walk on to the callers
    while frame is not None:
        if frame.f_code.co_name == "train_from_config" and frame.f_code.co_filename.endswith(_RUN_FILE):
            return frame.f_locals.get("config")
        frame = frame.f_back
    return None


def _flags_fix(config: Any, phase: str) -> Words | None:
    """The remedies as ``trainwell train`` flags, in order: halve the batch (accumulating to keep the batch per
    optimizer step), mixed precision, activation checkpointing; for the optimizer's state, a lighter optimizer."""
    from trainwell.config import CHECKPOINTED_MODELS

    train, model = config.train, config.model
    if phase == "step":
        return None if train.optimizer == "sgd" else (
            "--optimizer sgd (with momentum it keeps one value per weight, Adam two), or a smaller model "
            "(--set model.channels=[...] / model.hidden=[...])",
            "--optimizer sgd（带动量时每个权重只多存一个值，Adam 两个），或更小的模型（--set model.channels=[...] / "
            "model.hidden=[...]）")
    if phase not in ("forward", "backward"):
        return None
    en: list[str] = []
    zh: list[str] = []
    n, k = train.batch_size, train.accumulate
    if n >= 2:
        en.append(f"--batch-size {n // 2} (add --accumulate {2 * k} to keep {n * k} samples per optimizer step)")
        zh.append(f"--batch-size {n // 2}（加上 --accumulate {2 * k}，每次优化器步骤仍用 {n * k} 个样本）")
    if train.precision == "32":  # not yet in 16-bit mixed precision
        en.append("--precision bf16-mixed (activations in 16 bits)")
        zh.append("--precision bf16-mixed（激活值用 16 位）")
    if model.name in CHECKPOINTED_MODELS and not model.checkpoint:
        en.append("--set model.checkpoint=true (activations recomputed in backward instead of stored)")
        zh.append("--set model.checkpoint=true（激活值在反向传播时重新计算，不再保存）")
    if not en:
        return None
    return "try, in this order: " + "; ".join(en), "依次尝试：" + "；".join(zh)


def _oom(p: Parsed, ctx: Context, chk: ErrorCheck) -> Explanation:
    text = p.groups[0] if p.groups and p.groups[0] else ""
    asked = int(text) if p.kind == "cpu" and text else to_bytes(text) if text else None
    size = human_bytes(asked) if asked else text
    built = ctx.building()
    if ctx.through("autograd", ("backward", "grad", "_engine_run_backward")) or ctx.through("_tensor.py", ("backward",)):
        phase, place = "backward", (" in backward()", "反向传播（backward()）时")
    elif ctx.through("optim"):
        phase, place = "step", (" in optimizer.step()", "optimizer.step() 时")
    elif built is not None and not ctx.through("nn/modules/module.py", ("_call_impl",)):
        args = ", ".join(f"{k}={v}" for k, v in built[1].items())
        phase, place = "building", (f" while creating {type(built[0]).__name__}({args})",
                                    f"创建 {type(built[0]).__name__}({args}) 时")
    elif ctx.modules or ctx.loss_tensors()[0] is not None:
        phase, m = "forward", ctx.failing
        name = ctx.name_of(m) if m is not None else ""
        where = ((f", inside `{name}` ({describe(m)})", f"（`{name}` 内部）") if m is not None and name else
                 (f", inside {describe(m)}", f"（{describe(m)} 内部）") if m is not None else ("", ""))
        place = (" in the forward pass" + where[0], "前向传播" + where[1] + "时")
    else:
        phase, place = "elsewhere", (" outside the model's forward and backward", "模型的前向和反向传播之外")
    (explain, fix), steps = _REMEDIES[phase], chk.session.step
    config = _run_config(ctx)
    flags = _flags_fix(config, phase) if config is not None else None
    fix = flags or fix
    ev: dict[str, Any] = {"phase": phase, "requested": size or None, "optimizer_steps": steps}
    total = machine_memory(p.kind)
    mem = getattr(chk, "memory", [])
    if asked and total and asked > 64 * total and asked > 2**40:
        # Far beyond any batch-size effect: a size in the code is wrong.
        ev["device_memory"] = human_bytes(total)
        explain = (f"That is {asked / total:,.0f} times all the memory here ({human_bytes(total)}), so no batch size "
                   f"fixes it: a size in the code is computed wrongly (e.g. a one-hot or a table sized by raw ids, a "
                   f"layer sized from the whole dataset, numel() used where one dimension was meant).",
                   f"这是这里全部内存（{human_bytes(total)}）的 {asked / total:,.0f} 倍，减小 batch 也没用：代码里某个大小算错了"
                   f"（例如按原始 id 大小做 one-hot 或建表、按整个数据集大小建层、把 numel() 当成某一维的大小）。")
        if phase != "building":
            fix = ("print the sizes used at that line and correct the one that is far too large; raw ids: map them to "
                   "0..K-1 first: vocab, idx = torch.unique(ids, return_inverse=True)",
                   "打印那一行用到的大小，改正大得离谱的那个；原始 id：先映射到 0..K-1：vocab, idx = torch.unique(ids, "
                   "return_inverse=True)")
    elif len(mem) >= 3 and mem[-1][1] > 1.5 * mem[0][1] and all(b >= a for (_, a), (_, b) in zip(mem, mem[1:])):
        ev["memory"] = [[s, human_bytes(b)] for s, b in mem[-5:]]
        explain = (explain[0] + f" Memory in use grew from {human_bytes(mem[0][1])} at step {mem[0][0]} to "
                   f"{human_bytes(mem[-1][1])} at step {mem[-1][0]}: something keeps every step's tensors alive (e.g. "
                   f"total_loss += loss instead of loss.item(), or outputs stored without .detach(); see "
                   f"graph-retained).",
                   explain[1] + f"已用内存从第 {mem[0][0]} 步的 {human_bytes(mem[0][1])} 涨到第 {mem[-1][0]} 步的 "
                   f"{human_bytes(mem[-1][1])}：有东西让每一步的张量一直存活（例如 total_loss += loss 而不是 loss.item()，"
                   f"或保存输出时没有 .detach()；参见 graph-retained）。")
        fix = ("store plain numbers, not tensors: total_loss += loss.item(); history.append(out.detach().cpu())",
               "保存数值而不是张量：total_loss += loss.item(); history.append(out.detach().cpu())")
    elif steps >= 20 and phase in ("forward", "backward"):
        explain = (explain[0] + f" It failed after {steps} successful optimizer steps: if memory grows step after "
                   f"step, something keeps each step's graph alive (e.g. total_loss += loss instead of loss.item()); "
                   f"otherwise this batch is larger than the earlier ones (longer sequences, bigger images).",
                   explain[1] + f"它在成功执行 {steps} 次优化器步骤之后才失败：如果内存一步步上涨，是有东西让每一步的计算图一直存活"
                   f"（例如 total_loss += loss 而不是 loss.item()）；否则就是这个 batch 比之前的大（序列更长、图像更大）。")
    need = ((f" (it asked for {size} more)", f"（还需要 {size}）") if size else ("", ""))
    return Explanation(explain, fix, ev, place, {"size": need})
