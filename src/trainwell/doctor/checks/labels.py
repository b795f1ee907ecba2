"""labels-off-by-one: class labels numbered from 1 instead of 0.

Two ways to see it: over the run, the integer targets of cross-entropy / NLL are exactly
1..K (class 0 never appears) and the model has K + 1 outputs, so output 0 is dead and every
class is shifted; or the loss crashed with ``IndexError: Target K is out of bounds``.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from trainwell.doctor.check import Check, Text, register
from trainwell.doctor.events import ForwardEvent, LossEvent
from trainwell.doctor.where import where_in_traceback

_OUT_OF_BOUNDS = re.compile(r"Target (\d+) is out of bounds")

_DETAIL = {
    "shifted": {
        "en": "Class 0 never appeared in {n} labels, so output 0 is never trained and every class is shifted by "
              "one: argmax predictions are off by one when you evaluate or use the model.",
        "zh": "在 {n} 个标签里类别 0 从未出现，所以输出 0 从来没有被训练，每个类别都错位了一格："
              "评估或使用模型时，argmax 的预测结果都会差 1。",
    },
    "crash": {
        "en": "Label {largest} has no output, so the loss stopped with \"IndexError: Target {largest} is out of "
              "bounds\".",
        "zh": "标签 {largest} 没有对应的输出，所以损失函数报错停止：\"IndexError: Target {largest} is out of bounds\"。",
    },
}


@register
class LabelsOffByOne(Check):
    id = "labels-off-by-one"
    severity = "error"
    summary = "class labels start at 1 (or exceed the number of outputs) instead of running 0..C-1"
    text = {
        "en": Text(
            title="Class labels must run from 0 to number_of_classes - 1",
            message="CrossEntropyLoss / NLLLoss read a label as the index of an output, so with {outputs} outputs the "
                    "labels must be 0..{max_ok}. Your labels run from {smallest} to {largest}. {detail}",
            fix="shift the labels to start at 0: y = y - 1  # or give the last layer exactly as many outputs as "
                "there are classes: nn.Linear(hidden, {classes})"),
        "zh": Text(
            title="类别标签必须从 0 到 类别数 - 1",
            message="CrossEntropyLoss / NLLLoss 把标签当作输出的下标，所以有 {outputs} 个输出时，标签必须在 0..{max_ok} 之间。"
                    "你的标签范围是 {smallest} 到 {largest}。{detail}",
            fix="把标签平移到从 0 开始：y = y - 1  # 或者让最后一层的输出个数正好等于类别数：nn.Linear(hidden, {classes})"),
    }

    PER_CLASS = 20  # labels per class (on average) before judging mid-run
    MAX_LABEL = 100_000  # beyond this the targets are not class ids we can count cheaply
    MAX_CALLS = 500  # stop counting after this many loss calls

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.counts: torch.Tensor | None = None  # how often each label was seen
        self.outputs = 0
        self.where: str | None = None
        self.calls = 0
        self.decided = False
        self.token_batch: int | None = None  # batch size of the last token-id input (sequence models)

    def on_forward(self, ev: ForwardEvent) -> None:
        if not self.session.has_parameters(ev.module):
            return  # a loss module or a transform, not the model
        x = ev.inputs[0] if ev.inputs and isinstance(ev.inputs[0], torch.Tensor) else None
        seq = x is not None and not x.is_floating_point() and x.dtype != torch.bool and x.ndim >= 2
        self.token_batch = x.shape[0] if seq and x is not None else None

    def on_loss(self, ev: LossEvent) -> None:
        if self.decided or self.reported:
            self.session.relax(self, "on_forward", "on_loss")  # nothing left to count
            return
        if ev.name not in ("cross_entropy", "nll_loss"):
            return
        inp, t = ev.input, ev.target
        if not (isinstance(inp, torch.Tensor) and isinstance(t, torch.Tensor)) or t.is_floating_point():
            return  # soft targets (probabilities) have no label ids
        ignore = ev.kwargs.get("ignore_index", -100)
        if (isinstance(ignore, int) and ignore >= 0) or _ignores_class_zero(ev.kwargs.get("weight")):
            self.decided = True  # class 0 left out on purpose (padding / background)
            return
        # One label per sample only: token- or pixel-level targets (0 often = padding) stay out.
        if t.ndim != 1 or (self.token_batch is not None and t.shape[0] != self.token_batch) or inp.ndim < 2:
            return
        self.calls += 1
        if self.calls > self.MAX_CALLS:
            self.decided = True
            return
        t = t.detach()
        t = t[t >= 0].cpu()
        if t.numel() == 0:
            return
        if int(t.max()) > self.MAX_LABEL:
            self.decided = True
            return
        c = torch.bincount(t)
        if self.counts is None:
            self.counts = c
        else:
            if len(c) > len(self.counts):
                c, self.counts = self.counts, c
            self.counts[: len(c)] += c
        self.outputs, self.where = int(inp.shape[1]), ev.where
        self._judge(final=False)

    def on_end(self) -> None:
        if not self.decided:
            self._judge(final=True)

    def _judge(self, final: bool) -> None:
        counts = self.counts
        if counts is None:
            return
        total, kinds = int(counts.sum()), int((counts > 0).sum())
        if kinds < 2 or total < (max(30, 5 * kinds) if final else self.PER_CLASS * kinds):
            return
        if int(counts[0]) > 0:
            self.decided = True  # class 0 is in use: labels are 0-based
            return
        top = len(counts) - 1
        # Exactly 1..K with K + 1 outputs: the signature of 1-based labels with a widened layer.
        if top == kinds and self.outputs == top + 1:
            self.decided = True
            self.report(self.where, {"smallest_label": 1, "largest_label": top, "labels_seen": total,
                                     "class_0_count": 0, "outputs": self.outputs},
                        smallest=1, largest=top, outputs=self.outputs, max_ok=self.outputs - 1, classes=top,
                        n=total, detail=self._say("shifted", n=total))

    def on_error(self, error: BaseException) -> None:
        m = _OUT_OF_BOUNDS.search(str(error)) if isinstance(error, IndexError) else None
        if m is None or self.reported:
            return
        label = int(m.group(1))
        inp, t = _loss_tensors(error)
        if inp is None or t is None:
            return
        outputs = int(inp.shape[1] if inp.ndim >= 2 else inp.shape[0])
        valid = t.detach()[t.detach() >= 0].cpu()
        smallest = int(valid.min()) if valid.numel() else label
        largest = int(valid.max()) if valid.numel() else label
        if self.counts is not None and int(self.counts.sum()) > 0:
            smallest = min(smallest, int(torch.nonzero(self.counts)[0]))
            largest = max(largest, len(self.counts) - 1)
        classes = largest if smallest >= 1 else largest + 1
        self.report(where_in_traceback(error.__traceback__),
                    {"error": f"Target {label} is out of bounds", "label": label, "outputs": outputs,
                     "smallest_label": smallest, "largest_label": largest},
                    smallest=smallest, largest=largest, outputs=outputs, max_ok=outputs - 1, classes=classes,
                    detail=self._say("crash", largest=label))

    def _say(self, key: str, **values: Any) -> str:
        texts = _DETAIL[key]
        return texts.get(self.session.lang, texts["en"]).format(**values)


def _ignores_class_zero(weight: Any) -> bool:
    return isinstance(weight, torch.Tensor) and weight.numel() > 0 and float(weight.reshape(-1)[0]) == 0.0


def _loss_tensors(error: BaseException) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(input, target) of the cross-entropy / NLL call that raised, read from the traceback."""
    found: tuple[torch.Tensor | None, torch.Tensor | None] = (None, None)
    tb = error.__traceback__
    while tb is not None:
        loc = tb.tb_frame.f_locals
        if tb.tb_frame.f_code.co_name in ("cross_entropy", "nll_loss") and isinstance(loc.get("input"), torch.Tensor) \
                and isinstance(loc.get("target"), torch.Tensor):
            found = (loc["input"], loc["target"])
        tb = tb.tb_next
    return found
