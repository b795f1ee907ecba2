"""TorchScript through ``torch.jit.trace`` (``torch.jit.script`` when tracing fails); the metadata is the
extra file ``trainwell.json`` inside the archive."""

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
        try:
            module = torch.jit.trace(model, example, check_trace=False)
        except Exception as traced:  # noqa: BLE001 - tracing raises many types; scripting is the other way in
            try:
                module = torch.jit.script(model)
            except Exception:  # noqa: BLE001
                raise traced from None
        buffer = io.BytesIO()
        torch.jit.save(module, buffer, _extra_files={EXTRA: json.dumps(metadata, ensure_ascii=False)})
    return buffer.getvalue()


def read_metadata(blob: bytes) -> dict[str, Any]:
    return json.loads(zip_extra(blob, EXTRA) or "{}")


def load(blob: bytes) -> tuple[Runner, dict[str, Any]]:
    extra = {EXTRA: ""}
    with quiet():  # torch.jit's deprecation warnings
        module = torch.jit.load(io.BytesIO(blob), map_location="cpu", _extra_files=extra)
    return module, json.loads(extra[EXTRA] or "{}")
