"""``train.batch_size: auto`` and ``train.lr: auto`` become numbers before a run trains: the batch-size search,
then the learning-rate finder (the rate depends on the batch). The run's config.yaml holds the numbers (so it
reproduces the run exactly, and a resumed run never searches again), with comment lines saying where they came
from; batch_size_search.json, lr_find.json and lr_find.png keep the searches, and summary.json a short entry."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainwell.config import Config, TrainConfig, get_dotted
from trainwell.engine.callbacks import Callback
from trainwell.engine.trainer import Trainer

BATCH_FILE = "batch_size_search.json"


@dataclass
class Auto:
    """The config with numbers, config.yaml's comment lines, and the callback that adds summary.json's entries."""

    config: Config
    notes: list[str] = field(default_factory=list)
    callbacks: list[Callback] = field(default_factory=list)


def resolve_auto(config: Config, run_dir: Path, parts: Any, *, console: Any = None) -> Auto:
    """Run the searches the config asks for (single process only), record them in ``run_dir``, and read back
    what the folder records (also for a resumed run, whose config already holds the numbers)."""
    from trainwell.app.lr_sweep import single_process

    tc = config.train
    asked = [flag for flag, value in (("--batch-size auto", tc.batch_size), ("--lr auto", tc.lr)) if value == "auto"]
    if asked:
        single_process(parts.strategy.world_size, " and ".join(asked))
        config = config.model_copy(deep=True)
    if tc.batch_size == "auto":
        from trainwell.app.batch_size import choose_batch_size
        from trainwell.engine.run_folder import write_json

        size, found, line = choose_batch_size(config, parts, configured=configured(config, "batch_size"))
        write_json(run_dir / BATCH_FILE, found)
        config.train.batch_size = size
        _say(console, line)
    if tc.lr == "auto":
        from trainwell.app.lr_sweep import decide, record, sweep_run

        result = sweep_run(config, parts)
        rate = configured(config, "lr")
        lr, line = decide(result, rate)
        record(run_dir, result, chosen=lr, configured=rate)
        config.train.lr = lr
        _say(console, f"{line} ({result.seconds:.1f} s; the curve: lr_find.png)")
    entries = recorded(run_dir)
    return Auto(config, notes_for(entries), [Recorded(entries)] if entries else [])


def require_numbers(config: Config, command: str) -> None:
    """Commands that check one configuration (the doctor's preflight) need the numbers, not ``auto``."""
    from trainwell._errors import TrainwellError

    auto = [key for key in ("batch_size", "lr") if getattr(config.train, key) == "auto"]
    if auto:
        raise TrainwellError(f"{command} checks one configuration; train.{' and train.'.join(auto)} "
                             f"{'is' if len(auto) == 1 else 'are'} auto, chosen only when `trainwell train` starts.",
                             fix="give numbers (`trainwell lr-find` suggests a learning rate)")


def configured(config: Config, key: str) -> Any:
    """What ``train.<key>`` would be without ``auto``: the dataset's recipe, else the default."""
    from trainwell.data.registry import DatasetRecipes

    recipe = DatasetRecipes().recipe(config.data.name, config.task)
    return get_dotted(recipe, f"train.{key}", TrainConfig.model_fields[key].default)


def recorded(run_dir: Path) -> dict[str, Any]:
    """summary.json's entries from the searches a run folder records."""
    from trainwell.app.lr_sweep import summary_entry

    entries = summary_entry(run_dir)
    path = run_dir / BATCH_FILE
    if path.is_file():
        found = json.loads(path.read_text(encoding="utf-8"))
        entries["batch_size_search"] = {k: found.get(k) for k in ("batch_size", "global_batch", "micro", "reason")
                                        if k in found} | {"file": BATCH_FILE}
    return entries


def notes_for(entries: dict[str, Any]) -> list[str]:
    """config.yaml's comment lines: where an automatic value came from."""
    notes = []
    batch = entries.get("batch_size_search")
    if batch:
        notes.append(f"train.batch_size was chosen by --batch-size auto ({BATCH_FILE}): {batch['reason']}")
    found = entries.get("lr_find")
    if found:
        how = "chosen by the learning-rate finder" if found["suggestion"] is not None \
            else "the configured rate, kept because the learning-rate finder gave no suggestion"
        notes.append(f"train.lr {found['chosen']:g} is {how} (--lr auto; lr_find.json, lr_find.png): "
                     f"{found['reason'].removeprefix('no suggestion: ')}")
    return notes


class Recorded(Callback):
    """Adds the searches' entries to summary.json."""

    def __init__(self, entries: dict[str, Any]) -> None:
        self.entries = entries

    def summary_entries(self, trainer: Trainer) -> dict[str, Any]:
        return dict(self.entries)


def _say(console: Any, line: str) -> None:
    if console is not None:
        console.print(line, highlight=False, soft_wrap=True)
