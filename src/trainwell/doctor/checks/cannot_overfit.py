"""cannot-overfit: the preflight's "overfit a tiny batch" test (guide B5.4, A7).

A healthy model, loss and data pipeline drive the loss on a few dozen samples close to
zero; if they cannot, there is a bug in one of them. This check has no event handlers:
``trainwell doctor`` (the preflight) runs the test and reports through it.
"""

from __future__ import annotations

from trainwell.doctor.check import Check, Text, register


@register
class CannotOverfit(Check):
    id = "cannot-overfit"
    severity = "error"
    summary = "(preflight) the model cannot fit a tiny batch: a bug in the model, the loss or the data"
    text = {
        "en": Text(
            title="The model cannot overfit {samples} samples",
            general="The model cannot overfit a handful of samples",
            message="After {steps} steps on the same {samples} samples the loss is still {loss} (it started at "
                    "{start}) and {accuracy} of them are classified correctly. Any working model memorizes a few "
                    "dozen samples, so something in the model, the loss or the data is broken.",
            fix="look for a softmax before the loss, a layer cut from the graph (.detach(), .data), inputs that "
                "do not reach the output, or labels that do not match the inputs; `trainwell summary` shows the "
                "shapes"),
        "zh": Text(
            title="模型无法过拟合 {samples} 个样本",
            general="模型无法过拟合少量样本",
            message="在同样的 {samples} 个样本上训练了 {steps} 步，损失仍是 {loss}（开始时为 {start}），"
                    "只有 {accuracy} 被分对。任何正常的模型都能记住几十个样本，所以模型、损失或数据中有错误。",
            fix="检查：损失之前是否多了 softmax、是否有层被切断计算图（.detach()、.data）、输入是否真的影响输出、"
                "标签是否与输入对应；`trainwell summary` 可以查看各层形状"),
    }
