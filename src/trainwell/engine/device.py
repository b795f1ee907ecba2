"""``--device auto|cpu|cuda[:N]|mps``: auto picks the best available; a missing device is a clear error."""

from __future__ import annotations

import torch

from trainwell._errors import TrainwellError


def resolve_device(name: str = "auto") -> torch.device:
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise TrainwellError(f"--device {name} was asked for, but torch sees no CUDA GPU.",
                             fix="use --device cpu (or auto), and run `trainwell env` to see why CUDA is unavailable")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise TrainwellError(f"--device {name}: only {torch.cuda.device_count()} CUDA device(s) exist.")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise TrainwellError(f"--device {name} was asked for, but MPS (Apple GPU) is not available here.",
                             fix="use --device cpu or auto")
    return device
