"""Every run folder under a directory as one row each: what ``trainwell runs`` prints.

The config columns are the dotted config.yaml keys whose values differ between the listed runs (the
rest is the same for all of them and says nothing). A folder that cannot be read is a row with
status ``unreadable`` and the reason, never an exception.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainwell._errors import TrainwellError
from trainwell.config import used_by_task
from trainwell.results.folder import (UnreadableRun, dotted, finished_at, headline_metrics, is_run_folder, read_run,
                                   status, stopped_early, train_seconds)

# Keys every run has its own value of: the name column already says which run it is.
NOT_COMPARED = frozenset({"name", "out"})
FIXED_COLUMNS = ("name", "date", "data", "model")
TAIL_COLUMNS = ("time", "status")
_SEARCH_DEPTH = 4  # runs/<group>/<run>/... is deep enough; checkpoints and tensorboard are never searched


@dataclass
class RunRow:
    path: Path
    status: str
    reason: str = ""
    date: str | None = None
    data: str | None = None
    model: str | None = None
    config: dict[str, Any] = field(default_factory=dict)  # every config.yaml value, by dotted key
    metrics: dict[str, Any] = field(default_factory=dict)  # val at the best epoch, test (see headline_metrics)
    time: float | None = None  # training seconds
    parameters: int | None = None
    early: tuple[int, int] | None = None  # (epoch, planned) for a run that early stopping ended

    @property
    def name(self) -> str:
        return self.path.name

    def value(self, column: str) -> Any:
        if column in self.metrics:
            return self.metrics[column]
        if column in self.config:
            return self.config[column] if used_by_task(column, self.config.get("task")) else None
        return getattr(self, column, None) if column in FIXED_COLUMNS + TAIL_COLUMNS + ("parameters",) else None


@dataclass
class Catalog:
    rows: list[RunRow]
    differing: list[str]  # dotted config keys whose values differ between the rows
    metric_columns: list[str]

    @property
    def columns(self) -> list[str]:
        return [*FIXED_COLUMNS, *self.differing, *self.metric_columns, *TAIL_COLUMNS]

    def to_json(self) -> list[dict[str, Any]]:
        return [{"name": r.name, "path": str(r.path), "date": r.date, "data": r.data, "model": r.model,
                 "config": {k: r.config.get(k) for k in self.differing if used_by_task(k, r.config.get("task"))},
                 **{k: r.metrics.get(k) for k in self.metric_columns},
                 "train_seconds": r.time, "parameters": r.parameters, "status": r.status, "reason": r.reason}
                for r in self.rows]


def find_run_folders(root: Path) -> list[tuple[Path, str]]:
    """``(folder, reason)`` for every run folder under ``root`` (``root`` itself when it is one), sorted by
    path; ``reason`` is empty, or says why a folder could not be searched."""
    if is_run_folder(root):
        return [(root, "")]
    found: list[tuple[Path, str]] = []

    def walk(folder: Path, depth: int) -> None:
        try:
            children = sorted(e.path for e in os.scandir(folder) if e.is_dir() and not e.name.startswith("."))
        except OSError as e:
            found.append((folder, f"cannot list the folder: {e.strerror or e}"))
            return
        for child in map(Path, children):
            try:
                run = is_run_folder(child)
            except OSError as e:
                found.append((child, f"cannot read the folder: {e.strerror or e}"))
                continue
            if run:
                found.append((child, ""))
            elif depth < _SEARCH_DEPTH:
                walk(child, depth + 1)

    walk(root, 1)
    return found


def row_of(path: Path) -> RunRow:
    """The row of one run folder; an unreadable one gets status ``unreadable`` with the reason."""
    try:
        run = read_run(path)
    except UnreadableRun as e:
        return RunRow(path=path, status="unreadable", reason=str(e))
    state, reason = status(run)
    return RunRow(path=path, status=state, reason=reason, date=finished_at(run) or None,
                  data=run.setting("data.name"), model=run.setting("model.name"),
                  config={k: v for k, v in dotted(run.config or {}).items() if k not in NOT_COMPARED},
                  metrics=headline_metrics(run, brief=True), time=train_seconds(run),
                  parameters=(run.summary or {}).get("parameters"), early=stopped_early(run))


def differing_keys(configs: list[dict[str, Any]]) -> list[str]:
    """The dotted keys whose value is not the same in every config that uses it (missing from one counts as
    different; a task's own section, ``text.*`` or ``embedding.*``, is compared among that task's runs only),
    in the order they first appear."""
    keys: dict[str, None] = {}
    for config in configs:
        keys.update(dict.fromkeys(config))
    missing = object()
    return [k for k in keys if len({json.dumps(c.get(k, missing), sort_keys=True, default=repr)
                                    for c in configs if used_by_task(k, c.get("task"))}) > 1]


def catalog(root: Path) -> Catalog:
    """Every run under ``root``, with the config keys that differ between the readable ones."""
    root = Path(root)
    if not root.is_dir():
        raise TrainwellError(f"{str(root)!r} is not a folder.",
                             fix="give the folder that holds your runs (default runs/), or one run folder")
    rows = [row_of(path) if not reason else RunRow(path=path, status="unreadable", reason=reason)
            for path, reason in find_run_folders(root)]
    readable = [r for r in rows if r.status != "unreadable"]
    metric_columns: dict[str, None] = {}
    for r in readable:
        metric_columns.update(dict.fromkeys(r.metrics))
    order = sorted(metric_columns, key=lambda k: (not k.startswith("val_"), list(metric_columns).index(k)))
    return Catalog(rows, differing_keys([r.config for r in readable]) if len(readable) > 1 else [], order)


def best_first(column: str) -> bool:
    """Metrics sort best first: losses up, accuracy and the other scores down."""
    return column.startswith(("val_", "test_")) and not column.endswith("loss")


def sort_rows(cat: Catalog, column: str, *, reverse: bool = False) -> None:
    """Sort the catalog's rows by ``column`` (any column, or any dotted config key); empty cells last."""
    known = cat.columns + ["parameters"] + sorted({k for r in cat.rows for k in r.config})
    if column not in known:
        from trainwell._registry import did_you_mean

        raise TrainwellError(f"--sort {column!r} is not a column.{did_you_mean(column, known)}",
                             fix="sort by one of: " + ", ".join(cat.columns))
    descending = best_first(column) != reverse

    def key(row: RunRow) -> tuple[int, Any]:  # numbers before text, so a mixed column still sorts
        value = row.value(column)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return (0, value) if number else (1, json.dumps(value, sort_keys=True, default=repr))

    present = sorted((r for r in cat.rows if r.value(column) is not None), key=key, reverse=descending)
    cat.rows = present + [r for r in cat.rows if r.value(column) is None]
