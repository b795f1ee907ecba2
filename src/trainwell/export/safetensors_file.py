"""The weights alone as safetensors (``safetensors.torch``); the configuration and preprocessing are the
header's ``trainwell`` metadata and ``export.json`` beside the file. Reading it rebuilds the model with
trainwell's own builders (a ``package.module:Class`` model is built only when the command line names it
again: see ``trainwell._trust``)."""

from __future__ import annotations

import json
import struct
from typing import Any

import torch
from torch import nn

from trainwell.export.formats import METADATA_KEY, ExportError, Runner, Signature, missing_package


def save(model: nn.Module, example: tuple[torch.Tensor, ...], signature: Signature, metadata: dict[str, Any]) -> bytes:
    try:
        from safetensors.torch import save as save_tensors
    except ImportError:
        raise missing_package("safetensors", "safetensors") from None
    # clone: tensors that share memory (tied weights) are refused by safetensors
    tensors = {k: v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}
    return save_tensors(tensors, metadata={METADATA_KEY: json.dumps(metadata, ensure_ascii=False)})


def load(blob: bytes) -> tuple[Runner, dict[str, Any]]:
    try:
        from safetensors.torch import load as load_tensors
    except ImportError:
        raise missing_package("safetensors", "safetensors") from None
    from trainwell.export.model import build_run_model

    metadata = read_metadata(blob)
    if "config" not in metadata:
        raise ExportError("This safetensors file was not written by `trainwell export`: it has no model "
                          "configuration to rebuild the model from.", fix="export the run again")
    model = build_run_model(metadata["config"], metadata["payload"])
    model.load_state_dict(load_tensors(blob))
    return model.eval(), metadata


def read_metadata(blob: bytes) -> dict[str, Any]:
    return json.loads(header_metadata(blob).get(METADATA_KEY, "{}"))


def header_metadata(blob: bytes) -> dict[str, str]:
    """The ``__metadata__`` of a safetensors file: an 8-byte little-endian header size, then the JSON header."""
    (size,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8:8 + size]).get("__metadata__") or {}
