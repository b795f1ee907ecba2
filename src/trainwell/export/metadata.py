"""What travels with an export: the preprocessing and classes (the checkpoint's data payload: scale, mean,
std, input shape, feature columns, class names, label mapping; for text the vocabulary and tokenizer
settings), the configuration, the inputs' names and where it came from. It is embedded in the exported
file (so ``trainwell predict FILE`` needs nothing else) and written to ``export.json`` beside it, with the
parity figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trainwell.export.formats import ExportError

VERSION = 1
SIDECAR = "export.json"


def export_metadata(fmt: str, payload: dict[str, Any], config: dict[str, Any], inputs: list[str],
                    source: dict[str, Any]) -> dict[str, Any]:
    task = payload.get("task", "classification")
    # through JSON once, so the embedded copy and export.json hold the same (JSON-safe) values
    return json.loads(json.dumps({"trainwell_export": VERSION, "format": fmt, "task": task, "inputs": inputs,
                                  "payload": payload, "config": config, "source": source}, default=str))


def check_metadata(metadata: dict[str, Any], path: Path) -> dict[str, Any]:
    """The metadata of a file ``trainwell export`` wrote; an error for any other file."""
    if metadata.get("trainwell_export") != VERSION or "payload" not in metadata:
        raise ExportError(f"{str(path)!r} carries no trainwell export metadata: it was not written by "
                          "`trainwell export`, so its preprocessing and classes are unknown.",
                          fix="export the run with `trainwell export RUN_DIR`, or predict with the run folder")
    return metadata


def sidecar_for(out: Path) -> Path:
    """``export.json`` beside ``out``; an error when it belongs to another exported file."""
    sidecar = out.parent / SIDECAR
    if sidecar.is_file():
        try:
            other = json.loads(sidecar.read_text(encoding="utf-8")).get("file")
        except (ValueError, OSError):
            other = None
        if other != out.name:
            raise ExportError(f"{sidecar} describes another export ({other!r}); writing {out.name} beside it "
                              "would replace its record.",
                              fix="give --out a folder of its own (each export keeps its export.json beside it)")
    return sidecar
