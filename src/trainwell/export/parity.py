"""The parity check: the exported model against the PyTorch model in eval mode, on the same real batches.

Passing means the largest absolute difference of outputs is within ``TOLERANCE`` (fp32) and, for a
classifier, every sample gets the same top-1 class.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from trainwell.export.formats import ExportError, Runner

TOLERANCE = 1e-4  # largest absolute difference of fp32 outputs


@dataclass
class Parity:
    split: str
    samples: int  # outputs compared (the batches may share samples)
    batch_sizes: list[int]
    max_abs_diff: float
    top1_agreement: float | None  # share of samples with the same top-1 class; None for embeddings
    tolerance: float = TOLERANCE

    @property
    def passed(self) -> bool:  # NaN fails too
        return self.max_abs_diff <= self.tolerance and self.top1_agreement in (None, 1.0)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}

    def describe(self) -> str:
        sizes = ", ".join(str(s) for s in self.batch_sizes)
        top1 = "" if self.top1_agreement is None else f"; same top-1 class for {100 * self.top1_agreement:.1f} %"
        return (f"largest |difference| {self.max_abs_diff:.2e} (tolerance {self.tolerance:.0e}){top1} "
                f"of {self.samples} outputs on {self.split} samples (batches of {sizes})")


def compare(model: nn.Module, runner: Runner, batches: list[tuple[torch.Tensor, ...]], *, split: str,
            classifier: bool) -> Parity:
    worst, same, count = 0.0, 0, 0
    with torch.inference_mode():
        for inputs in batches:
            expected = model(*inputs).float()
            got = runner(*inputs)
            got = (got[0] if isinstance(got, (tuple, list)) else got).float()
            if got.shape != expected.shape:
                raise ExportError(f"The exported model returns shape {tuple(got.shape)} for a batch of "
                                  f"{len(inputs[0])}, the PyTorch model {tuple(expected.shape)}.")
            diff = float((got - expected).abs().max()) if got.numel() else 0.0
            worst = diff if math.isnan(diff) else max(worst, diff)
            same += int((got.argmax(1) == expected.argmax(1)).sum()) if classifier else 0
            count += len(expected)
    return Parity(split, count, [len(b[0]) for b in batches], worst, same / count if classifier else None)
