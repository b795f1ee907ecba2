"""A finding: one detected problem, with its cause and fix in words a beginner can act on."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class Finding:
    id: str  # a stable check id, e.g. "zero-grad-missing"
    severity: Severity
    title: str
    message: str  # what happened and why it matters
    fix: str  # the change to make, with a one-line example
    where: str | None = None  # "train.py:23": the user's line that caused it
    evidence: dict[str, Any] = field(default_factory=dict)  # the measured values behind the verdict
    step: int | None = None  # optimizer step at detection
    ranks: list[int] | None = None  # several processes (`doctor run --nproc`): the ranks that saw it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
