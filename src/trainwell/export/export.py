"""Export a run: rebuild its model, write the format in memory, prove parity on real test samples,
and only then write the file and ``export.json`` (whole or not at all)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell._errors import TrainwellError
from trainwell.export.formats import (EXTENSIONS, FORMATS, LABELS, ExportError, Runner, Signature, format_module,
                                      reason)
from trainwell.export.parity import Parity

if TYPE_CHECKING:
    from trainwell._trust import Typed


@dataclass
class Exported:
    path: Path
    sidecar: Path
    format: str
    parity: Parity
    size_bytes: int
    seconds: float


def default_out(run_dir: Path, fmt: str) -> Path:
    """``RUN_DIR/export/FORMAT/model.EXT``: a folder per format, so each keeps its own export.json."""
    return run_dir / "export" / fmt / f"model{EXTENSIONS[fmt]}"


def export_run(run_dir: Path, fmt: str, out: Path | None = None, checkpoint: str = "best",
               say: Callable[[str], None] = lambda _: None, *, typed: Typed | None = None,
               force: bool = False) -> Exported:
    """Export ``run_dir``'s ``checkpoint`` to ``fmt``; raises :class:`ExportError` (and writes nothing)
    when the model cannot be exported or the export's outputs differ from the model's.

    ``typed`` are the model / tokenizer names given on the command line (a user's own code is built only
    when named there again). An existing ``out`` is replaced only with ``force``, and never when it is a
    file of a run folder (outside the folder's ``export/``)."""
    from trainwell._files import atomic_write, atomic_write_json
    from trainwell.export.metadata import export_metadata, sidecar_for
    from trainwell.export.model import load_run_model
    from trainwell.export.parity import compare
    from trainwell.export.samples import test_samples

    module = format_module(fmt)
    out = Path(out) if out is not None else default_out(run_dir, fmt)
    if not out.name.endswith(EXTENSIONS[fmt]) or out.name == EXTENSIONS[fmt]:
        raise ExportError(f"--out {out}: {LABELS[fmt]} exports are {EXTENSIONS[fmt]} files (predict tells the "
                          "format by the extension).", fix=f"--out {out.parent / ('model' + EXTENSIONS[fmt])}")
    check_out(out, fmt, force)
    sidecar = sidecar_for(out)
    start = time.perf_counter()
    model, payload, config = load_run_model(run_dir, checkpoint, typed)
    signature = Signature(text=payload.get("task") == "text",
                          max_length=payload.get("max_len") if "hf" in payload else None)
    metadata = export_metadata(fmt, payload, config, signature.names,
                               {"run": str(run_dir), "checkpoint": checkpoint})
    say(f"reading the {config['data']['name']} test split for the parity check")
    samples = test_samples(config, payload)
    say(f"exporting ({fmt})")
    try:
        blob = module.save(model, samples.example, signature, metadata)
        runner, _ = module.load(blob)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - exporters raise anything; the user gets the cause and the way out
        raise _cannot_export(model, fmt, samples.example, signature, metadata, e, config) from None
    say(f"parity check on {samples.split} samples")
    parity = compare(model, runner, samples.batches, split=samples.split,
                     classifier=payload.get("task") != "embedding")
    if not parity.passed:
        raise ExportError(f"The {LABELS[fmt]} export does not compute what the model computes: {parity.describe()}. "
                          "Nothing was written.",
                          fix=f"export to another format ({', '.join(f for f in FORMATS if f != fmt)})")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, lambda f: f.write(blob))
        atomic_write_json(sidecar, {"file": out.name, "sha256": _sha256(blob), **metadata,
                                    "parity": parity.to_dict()})
    except OSError as e:
        out.unlink(missing_ok=True)
        raise ExportError(f"Cannot write {out}: {e.strerror or e}.", fix="--out a writable place") from None
    return Exported(out, sidecar, fmt, parity, len(blob), time.perf_counter() - start)


def check_out(out: Path, fmt: str, force: bool) -> None:
    """Refuse an ``out`` that is a folder, that is a file of a run folder (checkpoints, config.yaml, ...:
    an export never replaces them), or that exists already without ``force``."""
    if out.is_dir():
        raise ExportError(f"--out {out} is a folder; it names the file to write.",
                          fix=f"--out {out / ('model' + EXTENSIONS[fmt])}")
    if not (out.exists() or out.is_symlink()):
        return
    run = _run_folder_of(out)
    if run is not None and not out.resolve().is_relative_to((run / "export").resolve()):
        raise ExportError(f"--out {out} is a file of the run folder {run}; an export never replaces a run's own "
                          "files. Nothing was written.",
                          fix=f"leave out --out (the export goes to {default_out(run, fmt)}), or give a new file")
    if not force:
        raise ExportError(f"--out {out} exists already; nothing was written.",
                          fix="give another --out, or add --force to replace it")


def _run_folder_of(path: Path) -> Path | None:
    """The run folder (config.yaml and checkpoints/) that holds ``path``, if any."""
    for folder in path.resolve().parents:
        if (folder / "config.yaml").is_file() and (folder / "checkpoints").is_dir():
            return folder
    return None


PT2_REFUSED = ("reading a .pt2 file runs Python's unpickler on parts of it and looks up functions by the names "
               "stored in it, so a crafted file can run code: trainwell does not load .pt2 files")


def load_exported(path: Path, typed: Typed | None = None) -> tuple[Runner, dict[str, Any]]:
    """An exported file's model (callable on CPU tensors) and the metadata embedded in it.

    The metadata is read first, as data; a model or tokenizer outside trainwell that it names is refused
    (before anything is imported) unless ``typed`` names it again. ``.pt2`` files are refused unread."""
    from trainwell._trust import check_file_names, code_names
    from trainwell.export.formats import format_of
    from trainwell.export.metadata import check_metadata

    fmt = format_of(path)
    if fmt == "exported":
        raise ExportError(f"{str(path)!r} is a torch.export program; {PT2_REFUSED}.",
                          fix="predict with the run folder (trainwell predict RUN_DIR FILE...), or export it as "
                              "onnx, torchscript or safetensors (trainwell export RUN_DIR --format onnx)")
    module = format_module(fmt)
    try:
        blob = path.read_bytes()
        metadata = check_metadata(module.read_metadata(blob), path)
        # only safetensors rebuilds the model from its name; the other formats carry it as a graph
        check_file_names(code_names(metadata.get("config"), metadata.get("payload"), model=fmt == "safetensors"),
                         path, typed)
        runner, _ = module.load(blob)
    except TrainwellError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged or foreign file
        raise ExportError(f"Cannot read {str(path)!r} as a {fmt} export: {reason(e)}",
                          fix="export the run again") from None
    return runner, metadata


def _cannot_export(model: Any, fmt: str, example: Any, signature: Signature, metadata: dict[str, Any],
                   error: BaseException, config: dict[str, Any]) -> ExportError:
    """The error for a model ``fmt`` cannot capture, naming the formats that do export it."""
    working = []
    for other in FORMATS:
        if other != fmt:
            try:
                format_module(other).save(model, example, signature, metadata)
                working.append(other)
            except Exception:  # noqa: BLE001 - this format fails too
                pass
    from torch import nn

    name = config.get("model", {}).get("name", type(model).__name__)
    message = f"The {name} model cannot be exported to {LABELS[fmt]}: {reason(error)}"
    if any(isinstance(m, nn.RNNBase) for m in model.modules()):
        message += (" (its recurrent layers run over packed sequences, whose sizes depend on the lengths in the "
                    "data: a graph with symbolic shapes cannot capture them)")
    message += "."
    if working:
        return ExportError(f"{message} Formats that export it: {', '.join(working)}.",
                           fix=f"--format {working[0]}")
    return ExportError(f"{message} No other format exports it either.",
                       fix="keep the model's forward to tensor operations (no Python-side data-dependent "
                           "control flow), then export again")


def _sha256(blob: bytes) -> str:
    import hashlib

    return hashlib.sha256(blob).hexdigest()
