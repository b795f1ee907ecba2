"""``trainwell export``: a trained run as an ONNX, TorchScript, ``torch.export`` or safetensors file,
proven equal to the PyTorch model on the run's own test samples before anything is written.

``formats.py`` names the formats (one module each: ``onnx_file``, ``torchscript_file``, ``pt2_file``,
``safetensors_file``); ``model.py`` rebuilds a run's model; ``samples.py`` takes real test batches;
``parity.py`` compares the exported model with the eager one; ``metadata.py`` is the preprocessing that
travels inside every file and in ``export.json`` beside it; ``export.py`` ties them together.
"""

from __future__ import annotations

from trainwell.export.formats import FORMATS, ExportError

__all__ = ["FORMATS", "ExportError"]
