"""One run folder read from its own text files, and what they say about it: its status and its best epoch.

A run folder is a folder with ``config.yaml``. A file that is missing is ``None`` (a run stopped early has
no summary.json); a file that is there but cannot be read or parsed makes the whole folder
:class:`UnreadableRun`, naming the file and why.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from trainwell._errors import DataError, TrainwellError
from trainwell.config import YamlRefused, parse_yaml

FILES = ("config.yaml", "summary.json", "metrics.csv", "env.json", "doctor.json")


class UnreadableRun(TrainwellError):
    """A file of the run folder exists but cannot be read or parsed."""


@dataclass
class RunFiles:
    """What a run folder's files hold; ``None`` for a file that is not there."""

    path: Path
    config: dict[str, Any] | None
    summary: dict[str, Any] | None
    epochs: list[dict[str, Any]] = field(default_factory=list)  # metrics.csv, a row per epoch
    env: dict[str, Any] | None = None
    doctor: dict[str, Any] | None = None
    checkpoints: list[str] = field(default_factory=list)  # names in checkpoints/, e.g. ["best.pt", "last.pt"]

    @property
    def name(self) -> str:
        return self.path.name

    def setting(self, dotted: str, default: Any = None) -> Any:
        """A config.yaml value by its dotted key (``train.lr``), or ``default``."""
        node: Any = self.config or {}
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


def is_run_folder(path: Path) -> bool:
    return (path / "config.yaml").is_file()


def read_run(path: Path) -> RunFiles:
    """Read every file of the run folder at ``path``; :class:`UnreadableRun` names the first that fails."""
    path = Path(path)
    return RunFiles(path=path, config=_mapping(path / "config.yaml", _yaml),
                    summary=_mapping(path / "summary.json", json.loads), epochs=_metrics(path / "metrics.csv"),
                    env=_mapping(path / "env.json", json.loads),
                    doctor=_mapping(path / "doctor.json", json.loads), checkpoints=_listing(path / "checkpoints"))


def open_run(path: Path) -> RunFiles:
    """A run folder named on the command line: it must exist and hold a readable config.yaml."""
    from trainwell.engine.run_folder import check_run_dir

    check_run_dir(Path(path), checkpoint=False)
    try:
        return read_run(Path(path))
    except UnreadableRun as e:
        raise TrainwellError(f"Cannot read run folder {str(path)!r}: {e}.",
                             fix="repair or remove that file (a run still training rewrites it each epoch)") from None


# Files a resumed run writes again (env.json when it is missing, doctor.json and metrics.csv every epoch): one that
# cannot be parsed is set aside rather than stopping the run.
REBUILT_ON_RESUME = ("env.json", "doctor.json", "metrics.csv")


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """A run folder's summary.json (None when there is none, as for a run that has not finished); a file that is
    there but cut, empty, binary or not a mapping is a ``DataError`` naming it."""
    path = Path(run_dir) / "summary.json"
    try:
        return _mapping(path, json.loads)
    except UnreadableRun as e:
        raise DataError(f"{path} cannot be read: {e}. summary.json is written when a run finishes, so whether "
                        "this run finished is unknown.",
                        fix="restore summary.json from a copy of the run folder; or, to train the run to its end "
                            "again and rewrite it, move summary.json out of the folder and resume") from None


def set_aside_unreadable(run_dir: Path, say: Callable[[str], None]) -> list[str]:
    """Before a run folder is resumed: each of ``REBUILT_ON_RESUME`` that cannot be parsed is renamed to
    ``NAME.unreadable`` (kept, never deleted), so the run writes a fresh one; says so and returns the new names."""
    moved = []
    for name in REBUILT_ON_RESUME:
        path = Path(run_dir) / name
        try:
            _metrics(path) if name.endswith(".csv") else _mapping(path, json.loads)
            continue
        except UnreadableRun as e:
            reason = str(e)
        target = path.with_name(f"{name}.unreadable")
        n = 1
        while target.exists():
            n += 1
            target = path.with_name(f"{name}.unreadable-{n}")
        path.rename(target)
        moved.append(target.name)
        say(f"{reason}; set aside as {target.name} (the run writes a new {name} as it goes on)")
    return moved


def _yaml(text: str) -> Any:
    return parse_yaml(text)


def _text(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UnreadableRun(f"{path.name}: {_reason(e)}") from None


def _reason(error: BaseException) -> str:
    text = getattr(error, "strerror", None) or str(error)
    return text.splitlines()[0] if text else type(error).__name__


def _mapping(path: Path, parse: Any) -> dict[str, Any] | None:
    text = _text(path)
    if text is None:
        return None
    try:
        data = parse(text)
    except YamlRefused as e:  # well-formed, but not accepted (an alias, deep nesting)
        raise UnreadableRun(f"{path.name}: {_reason(e)}") from None
    except Exception as e:  # noqa: BLE001 - yaml and json raise their own errors; each names the spot
        raise UnreadableRun(f"{path.name}: not valid {path.suffix.lstrip('.').upper()} ({_reason(e)})") from None
    if not isinstance(data, dict):
        raise UnreadableRun(f"{path.name}: holds {type(data).__name__}, not a mapping")
    return data


def _metrics(path: Path) -> list[dict[str, Any]]:
    """metrics.csv's rows with numbers as numbers (an empty cell is None)."""
    text = _text(path)
    if text is None:
        return []
    try:
        rows = list(csv.DictReader(text.splitlines()))
    except csv.Error as e:
        raise UnreadableRun(f"metrics.csv: {e}") from None
    return [{k: _number(v) for k, v in row.items() if k is not None} for row in rows]


def _number(text: str | None) -> Any:
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _listing(path: Path) -> list[str]:
    if not path.is_dir():
        return []
    try:
        return sorted(p.name for p in path.iterdir() if p.suffix == ".pt")
    except OSError as e:
        raise UnreadableRun(f"checkpoints/: {_reason(e)}") from None


# ---------------------------------------------------------------------------------------------- what they say


def planned_epochs(run: RunFiles) -> int | None:
    value = run.setting("train.epochs")
    return value if isinstance(value, int) else None


def monitor_of(run: RunFiles) -> tuple[str, str]:
    """The monitored key and its direction (``min`` or ``max``); ``auto`` read as the engine does for the
    built-in metrics: losses go down, everything else (accuracy, auc) up."""
    key = str(run.setting("train.monitor", "val_loss"))
    mode = str(run.setting("train.monitor_mode", "auto"))
    if mode not in ("min", "max"):
        mode = "min" if key.endswith("loss") else "max"
    return key, mode


def best_row(run: RunFiles) -> dict[str, Any]:
    """The metrics.csv row of the best epoch: summary.json's ``best_epoch`` when there is one, else the
    row whose monitored value is best so far (a stopped run); ``{}`` without rows."""
    rows = run.epochs
    best = (run.summary or {}).get("best_epoch")
    if best is not None:
        return next((r for r in rows if r.get("epoch") == best), {})
    key, mode = monitor_of(run)
    scored = [r for r in rows if _finite(r.get(key))]
    if not scored:
        return {}
    pick = min if mode == "min" else max
    return pick(scored, key=lambda r: r[key])


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def diverged(run: RunFiles) -> str | None:
    """``"train_loss nan at epoch 3"`` when the last epoch's loss is not a finite number, else None."""
    last = run.epochs[-1] if run.epochs else {}
    for key in ("train_loss", "val_loss"):
        value = last.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            return f"{key} {value} at epoch {last.get('epoch')}"
    return None


def crash(run: RunFiles) -> str | None:
    """The error the doctor recorded when training raised (its error checks keep PyTorch's first line)."""
    for finding in (run.doctor or {}).get("findings", []):
        error = (finding.get("evidence") or {}).get("error") if isinstance(finding, dict) else None
        if error:
            return str(error)
    return None


def stopped_early(run: RunFiles) -> tuple[int, int] | None:
    """``(epoch, planned)`` for a run that early stopping ended before its planned epochs (summary.json's
    ``stopped_early``), else None."""
    summary, planned = run.summary or {}, planned_epochs(run)
    done = summary.get("stopped_epoch", summary.get("epochs"))
    if summary.get("stopped_early") is True and isinstance(done, int) and planned is not None and done < planned:
        return done, planned
    return None


def status(run: RunFiles) -> tuple[str, str]:
    """``(status, reason)``. finished: summary.json records every planned epoch, or an early stop, and the
    loss stayed finite (the reason says when it stopped early); failed: training raised (the doctor kept the
    error), the loss became nan/inf, or summary.json records fewer epochs than planned without an early stop;
    interrupted: no summary.json and no sign of failure (stopped by Ctrl-C, a kill or a lost machine;
    ``trainwell train --resume`` continues it)."""
    planned = planned_epochs(run)
    gone = diverged(run)
    if gone:
        return "failed", f"diverged: {gone}"
    if run.summary is not None:
        early = stopped_early(run)
        if early:
            return "finished", "stopped early at epoch {} of {}".format(*early)
        done = run.summary.get("epochs")
        if isinstance(done, int) and planned is not None and done < planned:
            return "failed", f"summary.json records {done} of {planned} epochs"
        return "finished", ""
    error = crash(run)
    if error:
        return "failed", f"stopped by an error: {error}"
    done = run.epochs[-1].get("epoch") if run.epochs else 0
    saved = "a checkpoint" if "last.pt" in run.checkpoints else "no checkpoint yet"
    return "interrupted", f"stopped after epoch {done} of {planned if planned is not None else '?'} ({saved})"


def status_text(run: RunFiles) -> str:
    """``finished``, or the status and its reason: ``interrupted: stopped after epoch 2 of 5 (a checkpoint)``."""
    return ": ".join(filter(None, status(run)))


def finished_at(run: RunFiles) -> str:
    """summary.json's ``finished_at``; for a run without it, when its files were last written."""
    stamp = (run.summary or {}).get("finished_at")
    if stamp:
        return str(stamp)
    times = []
    for name in FILES:
        try:
            times.append((run.path / name).stat().st_mtime)
        except OSError:
            continue
    return datetime.fromtimestamp(max(times)).strftime("%Y-%m-%dT%H:%M:%S") if times else ""


def train_seconds(run: RunFiles) -> float | None:
    """summary.json's ``train_seconds``, or the epochs' seconds added up for a run without one."""
    value = (run.summary or {}).get("train_seconds")
    if _finite(value):
        return float(value)
    seconds = [r["seconds"] for r in run.epochs if _finite(r.get("seconds"))]
    return float(sum(seconds)) if seconds else None


TASK_METRICS = ("accuracy", "auc")  # classification and text; embedding (verification ROC AUC)


def headline_metrics(run: RunFiles, *, brief: bool = False) -> dict[str, Any]:
    """The figures a run is judged by, keys as in summary.json: the monitored value and val loss and metric at
    the best epoch, and the test loss and metric; ``brief``: the monitored value and the task's metric (val
    and test) only. A figure the run did not record is left out."""
    summary, row = run.summary or {}, best_row(run)
    key, _ = monitor_of(run)
    metric = next((m for m in TASK_METRICS if any(_finite(summary.get(f"{s}_{m}", row.get(f"{s}_{m}")))
                                                   for s in ("val", "test"))), None)
    names = [key, *(["val_loss"] if not brief else []), f"val_{metric}", *(["test_loss"] if not brief else []),
             f"test_{metric}", *(["test_tar_at_far1"] if not brief and metric == "auc" else [])]
    out: dict[str, Any] = {}
    for name in names:
        value = summary.get(name, row.get(name) if not name.startswith("test_") else None)
        if _finite(value):
            out[name] = value
    return out


def dotted(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested mapping flattened to dotted keys (``{"train": {"lr": 0.1}}`` -> ``{"train.lr": 0.1}``)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(dotted(value, name + "."))
        else:
            out[name] = value
    return out
