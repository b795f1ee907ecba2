"""Which run folder ``trainwell train`` trains into, and with which config: a new folder (``--out`` or a fresh
name) or the one ``--resume`` continues; under torchrun, rank 0 opens it and tells the other workers. The
``--nproc`` launcher (``cli/launch.py``) and each worker (``cli/train.py``) both start here."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from trainwell.cli.config_options import config_flags

# What this module prints, per language.
_WORDS: dict[str, tuple[str, str]] = {  # key: (English, Chinese)
    "changed": ("Config (saved as {path}), the values that differ from the defaults (--show-config: all):",
                "配置（保存为 {path}），与默认值不同的项（--show-config 显示全部）："),
    "full": ("Config (saved as {path}):", "配置（保存为 {path}）："),
}


def open_run(args: argparse.Namespace, console: Any) -> tuple[Any, Path, bool] | None:
    """The run's config and folder from the options: a new folder (``--out`` or a fresh name), or the folder
    ``--resume`` continues. Returns (config, folder, whether ``--out`` existed already), or None for a finished
    run (after saying so)."""
    from trainwell._errors import TrainwellError
    from trainwell.app.configure import resolve
    from trainwell.config import load_run_config

    if args.resume:
        from trainwell.engine.run_folder import check_run_dir

        run_dir = check_run_dir(Path(args.resume), checkpoint=False)
        code = ("model.name", "text.tokenizer")  # may be given again, equal to the saved ones (docs/SECURITY.md)
        given = {k: v for k, v in config_flags(args).items() if v is not None and k not in code}
        if given or args.config or args.set:
            raise TrainwellError("--resume continues a run with its saved config.yaml; other options cannot change it.",
                                 fix=f"run `trainwell train --resume {run_dir}` alone, or start a new run")
        from trainwell.engine.run_folder import hold_run_dir

        hold_run_dir(run_dir, say=lambda text: console.print(text, highlight=False, markup=False, soft_wrap=True))
        config = load_run_config(run_dir)
        _same_code(config, args, run_dir)
        from trainwell.results.folder import set_aside_unreadable

        set_aside_unreadable(run_dir, say=lambda text: console.print(text, highlight=False, markup=False,
                                                                     soft_wrap=True))
        if _finished(console, run_dir, config.train.epochs):
            from trainwell.app.complete import complete_finished_run

            complete_finished_run(run_dir, say=lambda text: console.print(text, highlight=False, markup=False,
                                                                          soft_wrap=True))
            print(run_dir)
            return None
        return config, run_dir, True
    from trainwell.engine.run_folder import default_name, new_run_dir

    config = resolve(file=Path(args.config) if args.config else None, flags=config_flags(args), sets=args.set)
    existed = config.out is not None and Path(config.out).expanduser().is_dir()
    run_dir = new_run_dir(config.out, config.name or default_name(config.data.name, config.model.name, config.task))
    return config, run_dir, existed


def _same_code(config: Any, args: argparse.Namespace, run_dir: Path) -> None:
    """With ``--resume``, ``--model`` / ``--tokenizer`` name the run's own code again; they cannot change it."""
    from trainwell._errors import TrainwellError
    from trainwell._trust import CODE_KEYS, typed_names
    from trainwell.config import get_dotted

    for key, name in typed_names(args.model, getattr(args, "tokenizer", None)).items():
        saved = get_dotted(config.to_dict(), key, None)
        if name != saved:
            raise TrainwellError(f"--resume continues a run with its saved config.yaml, whose {key} is {saved!r}; "
                                 f"{CODE_KEYS[key].option} {name} cannot change it.",
                                 fix=f"leave out {CODE_KEYS[key].option}, or give it exactly as saved")


def shared_run(args: argparse.Namespace, console: Any) -> tuple[Any, Path, bool, bool] | None:
    """(config, run folder, whether --out existed, whether to resume), or None for a finished run. Alone:
    ``open_run``. Under torchrun: rank 0 opens the folder (a new one, or --resume's) and tells the others; a group
    torchrun restarted after a failure continues the folder of ``--out``."""
    from trainwell.machine import is_distributed

    if not is_distributed():  # alone: no torch before the options are checked
        opened = open_run(args, console)
        return None if opened is None else (*opened, bool(args.resume))
    from trainwell.app.configure import resolve
    from trainwell.config import load_run_config
    from trainwell.engine import distributed
    from trainwell.engine.device import resolve_device

    out = Path(args.out).expanduser() if args.out else None
    if distributed.restarted() and out is not None and (out / "config.yaml").is_file():
        if distributed.env_rank() == 0:  # the failed group's rank 0 is gone: its lock is stale, taken over here
            from trainwell.engine.run_folder import hold_run_dir

            hold_run_dir(out, say=lambda text: None)
        return load_run_config(out), out, True, True
    # Every rank reads the same options (a mistake in them stops every rank alike; rank 0 says so).
    config = load_run_config(Path(args.resume)) if args.resume else \
        resolve(file=Path(args.config) if args.config else None, flags=config_flags(args), sets=args.set)
    distributed.init(distributed.device_for(resolve_device(config.device)), config.train.timeout)
    opened = distributed.on_rank0(lambda: open_run(args, console))  # the others learn rank 0's folder
    return None if opened is None else (*opened, bool(args.resume))


def _finished(console: Any, run_dir: Path, epochs: int) -> bool:
    """A run whose summary.json records all its epochs (or an early stop) has nothing left to resume: say so."""
    from trainwell.results.folder import read_summary

    summary = read_summary(run_dir) or {}
    done = summary.get("epochs")
    if summary.get("stopped_early"):
        trained = f"it stopped early after epoch {summary.get('stopped_epoch')}"
    elif not isinstance(done, int) or done < epochs:
        return False
    else:
        trained = f"all {epochs} epochs trained"
    console.print(f"{run_dir} is finished: {trained}, results in summary.json and report.html; "
                  "nothing to resume. To train longer, start a new run (e.g. with --epochs).", highlight=False)
    return True


def show_config(console: Any, config: Any, run_dir: Path, *, full: bool = False, lang: str = "en") -> None:
    """The run's config as it starts: the keys that differ from the defaults, one a line; ``full``: every key (the
    sections of other tasks, saved in config.yaml, are not shown)."""
    import json

    from trainwell._lang import say
    from trainwell.config import differences

    if not full:
        changed = differences(config)
        console.print(say(_WORDS, lang, "changed", path=run_dir / "config.yaml"), highlight=False, soft_wrap=True)
        for key, value in changed.items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            console.print(f"  {key}: {shown}", highlight=False, markup=False, soft_wrap=True)
        return
    import yaml

    from trainwell.config import TASK_SECTIONS

    class Dumper(yaml.SafeDumper):
        pass

    # Sections as blocks, lists on one line: short enough to read at a glance.
    Dumper.add_representer(list, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
    shown = config.to_dict()
    for section in TASK_SECTIONS:  # another task's settings are saved in config.yaml, not shown
        if config.task != section:
            shown.pop(section, None)
    text = yaml.dump(shown, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=200)
    console.print(say(_WORDS, lang, "full", path=run_dir / "config.yaml"), highlight=False, soft_wrap=True)
    console.print(text.rstrip(), highlight=False, markup=False, soft_wrap=True)
