"""ONNX through ``torch.onnx.export(dynamo=True)``, run with onnxruntime on the CPU.
The export's metadata is the ONNX metadata prop ``trainwell`` (JSON)."""

from __future__ import annotations

import json
from typing import Any

import torch
from torch import nn

from trainwell.export.formats import METADATA_KEY, ExportError, Runner, Signature, missing_package, quiet


def save(model: nn.Module, example: tuple[torch.Tensor, ...], signature: Signature, metadata: dict[str, Any]) -> bytes:
    import inspect

    try:
        import onnxscript  # noqa: F401  (the dynamo exporter's translator)
    except ImportError:
        raise missing_package("onnxscript", "onnx") from None
    if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
        raise ExportError(f"ONNX export goes through torch.onnx.export(dynamo=True), which torch {torch.__version__} "
                          "does not have.", fix="pip install 'torch>=2.5'")
    with quiet():
        program = torch.onnx.export(model, example, dynamo=True, input_names=signature.names,
                                    output_names=["output"], dynamic_shapes=signature.dynamic_shapes(),
                                    external_data=False, verbose=False)
    assert program is not None
    proto = program.model_proto
    prop = proto.metadata_props.add()
    prop.key, prop.value = METADATA_KEY, json.dumps(metadata, ensure_ascii=False)
    return proto.SerializeToString()


def read_metadata(blob: bytes) -> dict[str, Any]:
    try:
        import onnx
    except ImportError:
        raise missing_package("onnxruntime", "onnx") from None
    proto = onnx.load_model_from_string(blob)
    return json.loads(next((p.value for p in proto.metadata_props if p.key == METADATA_KEY), "{}"))


def load(blob: bytes) -> tuple[Runner, dict[str, Any]]:
    try:
        import onnx
        import onnxruntime
    except ImportError:
        raise missing_package("onnxruntime", "onnx") from None
    proto = onnx.load_model_from_string(blob)
    metadata = json.loads(next((p.value for p in proto.metadata_props if p.key == METADATA_KEY), "{}"))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()  # the same cores PyTorch uses
    options.log_severity_level = 3  # errors only
    session = onnxruntime.InferenceSession(blob, options, providers=["CPUExecutionProvider"])
    wanted = [i.name for i in session.get_inputs()]
    names = metadata.get("inputs") or wanted

    def run(*inputs: torch.Tensor) -> torch.Tensor:
        feed = {n: t.detach().cpu().contiguous().numpy() for n, t in zip(names, inputs) if n in wanted}
        return torch.from_numpy(session.run(None, feed)[0])

    return run, metadata
