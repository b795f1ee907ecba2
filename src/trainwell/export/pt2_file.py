"""A ``torch.export`` program (``.pt2``, ``torch.export.save``); the metadata is the extra file
``trainwell.json`` inside the archive. Load it with ``torch.export.load(path).module()``.

``load`` serves the parity check of a program just exported in this process. ``torch.export.load`` unpickles
parts of the archive and resolves functions by the names stored in it, so ``trainwell predict`` never loads a
``.pt2`` file it is given (``export.load_exported`` refuses it)."""

from __future__ import annotations

import io
import json
from typing import Any

import torch
from torch import nn

from trainwell.export.formats import METADATA_KEY, Runner, Signature, quiet, zip_extra

EXTRA = f"{METADATA_KEY}.json"


def save(model: nn.Module, example: tuple[torch.Tensor, ...], signature: Signature, metadata: dict[str, Any]) -> bytes:
    with quiet():
        program = torch.export.export(model, example, dynamic_shapes=signature.dynamic_shapes())
    buffer = io.BytesIO()
    torch.export.save(program, buffer, extra_files={EXTRA: json.dumps(metadata, ensure_ascii=False)})
    return buffer.getvalue()


def read_metadata(blob: bytes) -> dict[str, Any]:
    return json.loads(zip_extra(blob, EXTRA) or "{}")


def load(blob: bytes) -> tuple[Runner, dict[str, Any]]:
    extra = {EXTRA: ""}
    with quiet():
        program = torch.export.load(io.BytesIO(blob), extra_files=extra)
    return program.module(), json.loads(extra[EXTRA] or "{}")
