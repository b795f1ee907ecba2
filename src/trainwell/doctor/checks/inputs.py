"""nonfinite-input / unnormalized-input: what the data batch fed to a model looks like.

Both look at top-level model calls only (a model with parameters, not a loss module or a
parameter-free transform) and only at tensors that come from the data, not from the
model's own computation (no ``grad_fn``).
"""

from __future__ import annotations

import math

from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from trainwell.doctor.check import Check, Text, register, sampled_and_evaluation, sampled_only
from trainwell.doctor.checks._grads import read_back
from trainwell.doctor.events import FedCall, ForwardEvent

# A first layer of these types normalizes the raw input itself.
_NORM_LAYERS: tuple[type[nn.Module], ...] = (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm,
                                             nn.LocalResponseNorm)


def tensors(obj: Any, depth: int = 0) -> Iterator[torch.Tensor]:
    """Tensors in a call's arguments or output (one or two levels into tuples, lists and dicts)."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif depth < 2 and isinstance(obj, (list, tuple)):
        for item in obj:
            yield from tensors(item, depth + 1)
    elif depth < 2 and isinstance(obj, dict):
        for item in obj.values():
            yield from tensors(item, depth + 1)


def is_data(x: torch.Tensor) -> bool:
    """A floating tensor the model did not compute (a batch, not an activation)."""
    return x.is_floating_point() and x.grad_fn is None and not x.requires_grad and x.numel() > 0


@register
class NonfiniteInput(Check):
    id = "nonfinite-input"
    severity = "error"
    summary = "the data batch fed to the model contains NaN or inf"
    text = {
        "en": Text(
            title="The input batch contains NaN / inf values",
            message="A batch of shape {shape} given to the model holds {count} non-finite values ({nan} NaN, {inf} "
                    "inf) in {rows} of its {batch} samples. A single NaN or inf in the input makes the outputs or "
                    "the gradients NaN, and one optimizer step with NaN gradients turns every weight into NaN.",
            fix="clean the data before training, e.g. replace missing values by the column mean: "
                "x = torch.where(torch.isnan(x), torch.nanmean(x, dim=0), x)  # or drop them: "
                "x = x[torch.isfinite(x).all(dim=1)]"),
        "zh": Text(
            title="输入批次中含有 NaN / inf",
            message="送进模型的一个形状为 {shape} 的批次里有 {count} 个非有限值（{nan} 个 NaN，{inf} 个 inf），"
                    "分布在 {batch} 个样本中的 {rows} 个里。输入里只要有一个 NaN 或 inf，输出或梯度就会变成 NaN，"
                    "而用 NaN 梯度做一次优化器更新就会让所有权重都变成 NaN。",
            fix="训练前先清洗数据，例如用列均值填补缺失值：x = torch.where(torch.isnan(x), torch.nanmean(x, dim=0), x)"
                "  # 或者直接丢弃：x = x[torch.isfinite(x).all(dim=1)]"),
    }

    # A NaN in one batch must be seen on whatever step it comes: between windows the training batches reach the
    # check together (``on_fed``), summed in one reduction per window; evaluation batches come as events.
    ARMED = 100  # forwards looked at closely after a non-finite batch went by on a step that was not sampled
    KEEP_BYTES = 16 * 2**20  # batches kept unsummed between sampled steps (bigger ones are summed at once)

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        # Per device: the running sum of the batches since the last sampled step, not read yet (non-finite
        # when one of them held NaN / inf, or, rarely, when the sum overflows: then the next ones are looked at).
        self.suspect: dict[torch.device, torch.Tensor] = {}
        # Batches of steps not sampled, kept as they are (a reference and its version) to be summed together.
        self.kept: list[tuple[torch.Tensor, int]] = []
        self.kept_bytes = 0
        self.at_once = False  # a batch kept was changed in place (a reused buffer): sum them at once
        self.armed = 0
        self.watching_each = False  # armed: every call is handed over as an event (``Session.every_call``)
        self.on_purpose = False  # the model was seen neutralizing non-finite inputs (masks)
        self.seen = (0, 0, 0)  # the session's (backward passes, losses, shared backward passes) at the last hand-over

    @sampled_and_evaluation  # and every call while armed (``every_call``)
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.reported or not self.session.has_parameters(ev.module):
            return
        inputs = ev.inputs
        if len(inputs) == 1 and type(inputs[0]) is torch.Tensor:  # the usual model(x): no generator
            data = [inputs[0]] if is_data(inputs[0]) else []
        else:
            data = [x for x in tensors(inputs) if is_data(x)]
        if not (self.session.sampled or self.armed):
            if not self.on_purpose:  # noted on the device; read on the next sampled step, so no step waits
                for x in data:
                    size = x.nbytes
                    # (An inference-mode tensor has no version to tell a later change by: summed at once.)
                    if self.at_once or self.kept_bytes + size > self.KEEP_BYTES or x.is_inference():
                        self._note(x.sum(dtype=torch.float32))  # (data needs no detach: no graph, no grad)
                    else:
                        self.kept.append((x, x._version))
                        self.kept_bytes += size
            return
        self._sum_kept()
        self._judge_kept()
        self._look(ev, data)
        if self.watching_each and not self.armed:
            self.watching_each = False
            self.session.every_call(self, "on_forward", on=False)  # back to windows and evaluation calls

    def on_fed(self, calls: list[FedCall]) -> None:
        if self.reported or self.on_purpose or self.armed:  # (while armed, each call came as an event)
            return
        for call in calls:
            inputs = call.inputs
            if len(inputs) == 1 and type(inputs[0]) is torch.Tensor:  # the usual model(x)
                if is_data(inputs[0]):
                    self.kept.append((inputs[0], inputs[0]._version))
            else:
                self.kept += [(x, x._version) for x in tensors(inputs) if is_data(x) and not x.is_inference()]
                for x in tensors(inputs):
                    if x.is_inference() and is_data(x):
                        self._note(x.sum(dtype=torch.float32))
        self._sum_kept()  # one reduction per sample shape, read on the window's first call

    def needs_fed(self) -> bool:
        return not (self.reported or self.on_purpose or self.armed or self._losses_vouch())

    def skips_fed(self, module: nn.Module) -> bool:
        """A call followed by a finite loss had finite inputs (what ``_losses_vouch`` takes at a hand-over)."""
        return True

    def _losses_vouch(self) -> bool:
        """Whether the losses say that no batch since the last hand-over held NaN / inf, so its inputs need no sum:
        each backward() since came after exactly one model call and had a scalar loss, no model call waits for its
        backward() now, and every one of those losses is finite (a non-finite input makes its loss non-finite; a
        batch whose loss is skipped or not a scalar, or a model called twice before one backward(), leaves it to
        the sums). The losses are read back only when the counts agree."""
        s = self.session
        backwards, shared, count = s.backward_count, s.shared_backwards, len(s.loss_steps)
        seen_backwards, seen_losses, seen_shared = self.seen
        self.seen = (backwards, count, shared)
        if s.calls_since_backward or shared != seen_shared or count - seen_losses != backwards - seen_backwards:
            return False
        return all(map(math.isfinite, s.losses[seen_losses:count]))

    def _note(self, total: torch.Tensor) -> None:
        """Add a batch's sum to its device's running sum: NaN and inf survive any sum."""
        seen = self.suspect.get(total.device)
        # (Not add_: a sum made under inference_mode cannot be changed in place outside it.)
        self.suspect[total.device] = total if seen is None else seen + total

    def _sum_kept(self) -> None:
        """The kept batches into the running sums: one reduction per device, dtype and sample shape."""
        kept, self.kept, self.kept_bytes = self.kept, [], 0
        groups: dict[tuple[Any, ...], list[torch.Tensor]] = {}
        for x, version in kept:
            if x._version != version:  # changed in place since it was fed: what the model saw is gone
                self.at_once = True
                continue
            if x.ndim == 0:
                x = x.reshape(1)
            # Same trailing shape: joined as they are (a reshape per batch would cost more than the sum).
            groups.setdefault((x.device, x.dtype, x.shape[1:]), []).append(x)
        for xs in groups.values():
            self._note((torch.cat(xs) if len(xs) > 1 else xs[0]).sum(dtype=torch.float32))

    def _judge_kept(self) -> None:
        if not all(math.isfinite(float(total)) for total in self.suspect.values()):
            self.armed = self.ARMED  # a bad batch went by unseen: look at the next ones closely
            self.session.nonfinite_data = True
            self.watching_each = True
            self.session.every_call(self, "on_forward")
        self.suspect.clear()

    def _look(self, ev: ForwardEvent, data: list[torch.Tensor]) -> None:
        self.armed = max(self.armed - 1, 0)
        for x in data:
            # One reduction per batch, no temporary: a NaN or inf anywhere makes the sum non-finite
            # (a sum that overflows is double-checked below).
            if math.isfinite(float(x.detach().sum())) or bool(torch.isfinite(x).all()):
                continue
            self.armed = 0
            bad = ~torch.isfinite(x)
            nan, count = int(torch.isnan(x).sum()), int(bad.sum())
            # A model may neutralize them on purpose (an additive 0 / -inf attention mask, NaN
            # replaced inside forward): then the output stays finite. +inf always counts, since a
            # saturating layer can hide it from the output while the gradients become NaN.
            if not bool((x == float("inf")).any()) and all(
                    bool(torch.isfinite(o).all()) for o in tensors(ev.output) if o.is_floating_point()):
                self.on_purpose = True
                continue
            self.session.nonfinite_data = True
            rows = int(bad.reshape(x.shape[0], -1).any(dim=1).sum()) if x.ndim >= 1 else 1
            batch = x.shape[0] if x.ndim >= 1 else 1
            shape = tuple(x.shape)
            self.report(ev.where, {"non_finite_values": count, "nan": nan, "inf": count - nan,
                                   "samples_affected": rows, "batch_shape": list(shape)},
                        count=count, nan=nan, inf=count - nan, rows=rows, batch=batch, shape=shape)
            return


@register
class UnnormalizedInput(Check):
    id = "unnormalized-input"
    severity = "warning"
    summary = "input features on a raw scale (e.g. pixels 0-255) instead of normalized"
    text = {
        "en": Text(
            title="The model's input is not normalized",
            message="The first layer receives values up to {absmax} with a standard deviation of {std} (in {hits} of "
                    "{checked} batches checked). Inputs this large make the first layer's outputs and gradients huge, "
                    "so training is unstable, needs a tiny learning rate, or stalls.",
            fix="scale the inputs to about [0, 1] or standardize them: x = x / 255.0  # images; "
                "x = (x - mean) / std  # features, with mean and std computed on the training set"),
        "zh": Text(
            title="模型的输入没有归一化",
            message="第一层收到的数值最大到 {absmax}，标准差为 {std}（检查的 {checked} 个批次中有 {hits} 个如此）。"
                    "这么大的输入会让第一层的输出和梯度都非常大，训练会不稳定、只能用极小的学习率，甚至停滞。",
            fix="把输入缩放到大约 [0, 1] 或做标准化：x = x / 255.0  # 图像；"
                "x = (x - mean) / std  # 特征，mean 和 std 用训练集计算"),
    }

    MAX_ABS = 10.0  # raw pixels reach 255 (digits' 16 already break SGD), standardized data rarely passes 10 ...
    MIN_STD = 5.0  # ... and when it does (outliers), its spread stays near 1
    HITS = 3  # batches that must look raw before warning
    LOOK = 50  # batches judged at most: the scale of the data does not change

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.checked = 0
        self.hits = 0

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        # leaf_calls is filled on sampled steps only, which keeps this cheap.
        if self.reported or self.checked >= self.LOOK or not ev.leaf_calls or not self.session.has_parameters(ev.module):
            return
        first, x, _ = ev.leaf_calls[0]
        if isinstance(first, _NORM_LAYERS):
            return  # the model normalizes its raw input itself
        # What the first layer sees: normalization done inside forward() is already applied.
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            return
        if x.ndim < 2 and not (x.ndim == 1 and x.numel() >= 3):
            return  # (one sample of several features, from a per-sample loop, is judged as a batch of one)
        if x.ndim >= 2 and x.numel() < 16:
            return
        if x.ndim == 2 and x.shape[1] == 1:
            return  # a lone scalar column (a timestep, an age) fed to its own layer: not the features
        xd = x.detach()
        absmax, std = read_back([xd.abs().max().float(), xd.float().std()])  # one wait
        self.checked += 1
        if absmax > self.MAX_ABS and std > self.MIN_STD:
            self.hits += 1
            if self.hits >= self.HITS and 2 * self.hits >= self.checked:
                self.report(ev.where, {"abs_max": absmax, "std": std, "batches_raw": self.hits,
                                       "batches_checked": self.checked, "input_shape": list(x.shape)},
                            absmax=absmax, std=std, hits=self.hits, checked=self.checked)


@register
class UncenteredInput(Check):
    id = "uncentered-input"
    severity = "info"
    summary = "tabular input features sit far from zero (mean many standard deviations away): not standardized"
    text = {
        "en": Text(
            title="The input features are not standardized",
            message="Over the {rows} input samples seen on the steps checked, {count} of {columns} feature columns sit "
                    "far from zero: their mean is {worst}x their standard deviation away from 0 (column {column}: mean "
                    "{mean}, std {std}). A network learns fastest from features centred at 0 with a spread near 1; "
                    "offset features make the first layer's steps lopsided, so plain SGD needs a smaller learning "
                    "rate and many more steps, and a short run can end far from what the model could reach. This is "
                    "advice from {rows} samples, not a verdict: training may still succeed, only slower.",
            fix="standardize each feature with the training set's statistics, once, before training: "
                "mean, std = X_train.mean(0), X_train.std(0); X_train = (X_train - mean) / std; "
                "X_val = (X_val - mean) / std  # or sklearn.preprocessing.StandardScaler"),
        "zh": Text(
            title="输入特征没有标准化",
            message="在检查的步骤里看到的 {rows} 个输入样本中，{columns} 个特征列里有 {count} 个离 0 很远：均值离 0 有标准差的 "
                    "{worst} 倍（第 {column} 列：均值 {mean}，标准差 {std}）。网络从以 0 为中心、离散程度接近 1 的特征学得最快；"
                    "偏离 0 的特征会让第一层的更新方向失衡，普通 SGD 只能用更小的学习率、走多得多的步数，短时间的训练可能离模型"
                    "本来能达到的效果还很远。这是根据 {rows} 个样本给出的建议，而不是定论：训练仍可能成功，只是更慢。",
            fix="在训练前用训练集的统计量对每个特征做一次标准化：mean, std = X_train.mean(0), X_train.std(0); "
                "X_train = (X_train - mean) / std; X_val = (X_val - mean) / std  # 或使用 sklearn.preprocessing.StandardScaler"),
    }

    ROWS = 20  # samples needed before judging (a per-sample loop shows one per sampled step)
    KEEP = 512  # samples kept at most
    OFFSET = 3.0  # a column whose |mean| is this many standard deviations or more sits far from zero
    MAX_COLUMNS = 256  # wider inputs (pixels, embeddings) are not tabular features

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.rows: list[torch.Tensor] = []
        self.kept = 0
        self.where: str | None = None
        self.off = False

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        if self.off or self.reported or self.kept >= self.KEEP or not ev.grad_enabled or not ev.leaf_calls:
            return
        if not self.session.has_parameters(ev.module):
            return
        first, x, _ = ev.leaf_calls[0]
        if isinstance(first, _NORM_LAYERS) or not isinstance(first, nn.Linear):
            self.off = isinstance(first, _NORM_LAYERS)  # a model that normalizes its input itself
            return
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.ndim not in (1, 2) or x.is_sparse:
            return
        if not 2 <= x.shape[-1] <= self.MAX_COLUMNS:
            return
        rows = x.detach().reshape(-1, x.shape[-1])[:64].float().cpu()
        self.rows.append(rows)
        self.kept += rows.shape[0]
        self.where = self.where or ev.where

    def on_end(self) -> None:
        if self.off or self.reported or self.kept < self.ROWS:
            return
        widths = {r.shape[1] for r in self.rows}
        if len(widths) != 1:
            return
        data = torch.cat(self.rows)
        if not bool(torch.isfinite(data).all()):
            return
        mean, std = data.mean(0), data.std(0)
        ordered = data.sort(0).values
        distinct = (ordered[1:] != ordered[:-1]).sum(0) + 1  # the values each column takes
        means, stds, counts = torch.stack([mean, std, distinct.float()]).tolist()  # one read for all columns
        # Columns with a spread and more than two values (one-hot and binary flags sit at 0/1 by design).
        varied = [j for j, (sd, n) in enumerate(zip(stds, counts)) if sd > 0 and n > 2]
        if not varied:
            return
        offsets = {j: abs(means[j]) / stds[j] for j in varied}
        far = [j for j in varied if offsets[j] >= self.OFFSET]
        if not far or 2 * len(far) < len(varied):
            return
        worst = max(far, key=lambda j: offsets[j])
        self.report(self.where, {"samples": int(data.shape[0]), "columns": len(varied), "offset_columns": len(far),
                                 "largest_offset": offsets[worst], "column": worst,
                                 "column_mean": means[worst], "column_std": stds[worst]},
                    rows=int(data.shape[0]), count=len(far), columns=len(varied), worst=f"{offsets[worst]:.3g}",
                    column=worst, mean=f"{means[worst]:.4g}", std=f"{stds[worst]:.3g}")
