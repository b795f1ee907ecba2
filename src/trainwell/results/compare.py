"""Two runs side by side: the config keys that differ and the deltas of what they measured (``trainwell diff``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainwell.results.catalog import NOT_COMPARED, differing_keys
from trainwell.results.folder import RunFiles, dotted, headline_metrics, status, train_seconds


@dataclass
class Delta:
    name: str  # summary.json's key (val_accuracy, test_loss, ...), train_seconds or parameters
    a: float | None
    b: float | None

    @property
    def change(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass
class Comparison:
    a: RunFiles
    b: RunFiles
    config: list[tuple[str, Any, Any]]  # (dotted key, a's value, b's value) for the keys that differ
    deltas: list[Delta]

    def to_json(self) -> dict[str, Any]:
        return {"a": str(self.a.path), "b": str(self.b.path),
                "status": {"a": status(self.a)[0], "b": status(self.b)[0]},
                "config": [{"key": k, "a": va, "b": vb} for k, va, vb in self.config],
                "deltas": [{"name": d.name, "a": d.a, "b": d.b, "change": d.change} for d in self.deltas]}


def compare(a: RunFiles, b: RunFiles) -> Comparison:
    ca, cb = ({k: v for k, v in dotted(r.config or {}).items() if k not in NOT_COMPARED} for r in (a, b))
    keys = differing_keys([ca, cb])
    ma, mb = headline_metrics(a), headline_metrics(b)
    names = list(dict.fromkeys([*ma, *mb]))
    deltas = [Delta(n, ma.get(n), mb.get(n)) for n in names]
    deltas.append(Delta("train_seconds", train_seconds(a), train_seconds(b)))
    deltas.append(Delta("parameters", (a.summary or {}).get("parameters"), (b.summary or {}).get("parameters")))
    return Comparison(a, b, [(k, ca.get(k), cb.get(k)) for k in keys], deltas)
