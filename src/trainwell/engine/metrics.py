"""What evaluation measures besides the loss: the ``Metric`` protocol and top-1 ``Accuracy`` (per head for
several), the training batches' hit rates, and adding up the shares of several processes (``combine``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import torch

if TYPE_CHECKING:
    from trainwell.engine.strategy import Strategy


class Metric(Protocol):
    """Accumulates model outputs over an evaluation pass; ``compute`` gives named values.

    ``direction(name)`` says, for a name ``compute`` returns, whether higher (``"max"``) or lower
    (``"min"``) is better, or ``None`` when it has no direction; a metric without the method declares
    none, and monitoring one of its values then needs an explicit mode. Under several processes each one sees
    its share of the split, and ``combine(strategy)`` (called before ``compute``) makes it hold everyone's.
    """

    def update(self, output: Any, target: Any) -> None: ...

    def compute(self) -> dict[str, float]: ...

    def direction(self, name: str) -> Literal["min", "max"] | None: ...


class Accuracy:
    """Top-1 accuracy for class-index targets; reports nothing where accuracy does not apply.

    With several heads (outputs and targets both tuples/lists of the same length, or dicts with
    the same keys) each classification head gets ``accuracy_<name>``: the dict key, else
    ``names[i]`` (a multi-task loss's task names), else the head's index.
    """

    def __init__(self, names: Sequence[str] | None = None) -> None:
        self.correct: torch.Tensor | int = 0  # a device tensor once counting starts: read once, in compute
        self.n, self.applies = 0, True
        self.names = list(names) if names else None
        self.heads: dict[str, Accuracy] = {}

    def update(self, output: Any, target: Any) -> None:
        heads = _heads(output, target, self.names)
        if heads is not None:
            for name, (out, y) in heads.items():
                self.heads.setdefault(name, Accuracy()).update(out, y)
            return
        if _is_class_target(output, target):
            self.correct = self.correct + (output.argmax(dim=1) == target).sum()
            self.n += int(target.shape[0])
        else:
            self.applies = False

    def compute(self) -> dict[str, float]:
        if self.heads:
            return {f"accuracy_{name}": value
                    for name, head in self.heads.items() for value in head.compute().values()}
        return {"accuracy": int(self.correct) / self.n} if self.applies and self.n else {}

    def combine(self, strategy: Strategy) -> None:
        """Sum the counts of every process (one exchange per evaluation; a process may have seen no batch)."""
        mine = {name: (int(h.correct), h.n, h.applies) for name, h in self.heads.items()}
        everyone = strategy.gather(((int(self.correct), self.n, self.applies), mine))
        self.correct, self.n = sum(own[0] for own, _ in everyone), sum(own[1] for own, _ in everyone)
        self.applies = all(own[2] for own, _ in everyone)
        for name in sorted({name for _, heads in everyone for name in heads}):
            counts = [heads[name] for _, heads in everyone if name in heads]
            head = self.heads.setdefault(name, Accuracy())
            head.correct, head.n = sum(c[0] for c in counts), sum(c[1] for c in counts)
            head.applies = all(c[2] for c in counts)

    def direction(self, name: str) -> Literal["min", "max"] | None:
        return "max" if name == "accuracy" or name.startswith("accuracy_") else None


def _is_class_target(output: Any, target: Any) -> bool:
    """Logits (N, C) and class indices (N,): where top-1 accuracy applies."""
    return (isinstance(output, torch.Tensor) and isinstance(target, torch.Tensor) and output.ndim == 2
            and target.ndim == 1 and not target.is_floating_point() and output.shape[0] == target.shape[0])


def _heads(output: Any, target: Any, names: list[str] | None) -> dict[str, tuple[Any, Any]] | None:
    """Pair up the heads of a multi-output model with their targets; None for a single output."""
    if isinstance(output, Mapping) and isinstance(target, Mapping) and output.keys() == target.keys():
        return {str(k): (output[k], target[k]) for k in output}
    if isinstance(output, (tuple, list)) and isinstance(target, (tuple, list)) and len(output) == len(target) > 1:
        keys = names if names and len(names) == len(output) else [str(i) for i in range(len(output))]
        return {k: (o, t) for k, o, t in zip(keys, output, target)}
    return None


def hit_rates(output: Any, target: Any, names: list[str] | None) -> dict[str, torch.Tensor]:
    """A training micro-batch's share of top-1 hits per accuracy name, on the device (nothing where
    accuracy does not apply, as :class:`Accuracy` decides)."""
    heads = _heads(output, target, names)
    pairs = {"accuracy": (output, target)} if heads is None else {f"accuracy_{k}": v for k, v in heads.items()}
    return {name: (out.detach().argmax(dim=1) == y).float().mean() for name, (out, y) in pairs.items()
            if _is_class_target(out, y)}


def combine(metric: Metric, strategy: Strategy) -> None:
    """Make ``metric`` hold every process's counts (its ``combine(strategy)``); a metric without one cannot be
    computed over several processes' shares of a split, which is an error rather than a per-process figure."""
    combine = getattr(metric, "combine", None)
    if combine is None:
        raise TypeError(f"The metric {type(metric).__name__} has no combine(strategy) method, so it cannot add up "
                        "the shares of the evaluation data that several processes computed. Give it one (sum its "
                        "counts with strategy.reduce_floats, or collect its outputs with strategy.gather).")
    combine(strategy)
