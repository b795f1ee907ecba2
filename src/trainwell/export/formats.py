"""The export formats: their file extensions, the module that writes and reads each, and what the
exported model's inputs are called and which of their dimensions stay free (batch; text: sequence length).

Each format module has ``save(model, example, signature, metadata) -> bytes`` (the whole file, in memory,
so nothing reaches the disk before the parity check passes), ``read_metadata(blob) -> dict`` (the embedded
metadata, read as data without loading the model) and ``load(blob) -> (runner, metadata)``, where
``runner(*inputs)`` returns the model's output as a CPU tensor.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from trainwell._errors import TrainwellError

if TYPE_CHECKING:
    import torch

FORMATS = ("onnx", "torchscript", "exported", "safetensors")
EXTENSIONS = {"onnx": ".onnx", "torchscript": ".pt", "exported": ".pt2", "safetensors": ".safetensors"}
LABELS = {"onnx": "ONNX", "torchscript": "TorchScript", "exported": "torch.export (.pt2)",
          "safetensors": "safetensors"}
_MODULES = {"onnx": "onnx_file", "torchscript": "torchscript_file", "exported": "pt2_file",
            "safetensors": "safetensors_file"}
METADATA_KEY = "trainwell"  # ONNX metadata prop / safetensors metadata key; "trainwell.json" inside zip formats

Runner = Callable[..., "torch.Tensor"]


class ExportError(TrainwellError):
    """A model that cannot be exported, or whose export does not compute what the model computes."""


@dataclass(frozen=True)
class Signature:
    """The exported model's inputs: ``x`` (batch, ...) or, for text, ``tokens`` (batch, length) and ``lengths``.
    ``max_length``: the longest text the model takes (a transformer's position embeddings), None for any."""

    text: bool
    max_length: int | None = None

    @property
    def names(self) -> list[str]:
        return ["tokens", "lengths"] if self.text else ["x"]

    def dynamic_shapes(self) -> tuple[dict[int, Any], ...]:
        """``torch.export`` dynamic shapes: any batch size, and for text any sequence length."""
        from torch.export import Dim

        batch = Dim("batch", min=1)
        length = Dim("length", min=1, max=self.max_length) if self.max_length else Dim("length", min=1)
        return ({0: batch, 1: length}, {0: batch}) if self.text else ({0: batch},)


def format_module(fmt: str) -> ModuleType:
    """The module that writes and reads ``fmt`` (imported on first use: onnx and onnxruntime are heavy)."""
    if fmt not in _MODULES:
        raise ExportError(f"Unknown export format {fmt!r}.", fix=f"--format one of {', '.join(FORMATS)}")
    return importlib.import_module(f"trainwell.export.{_MODULES[fmt]}")


def format_of(path: Path) -> str:
    """The format of an exported file, told by its extension."""
    for fmt, ext in EXTENSIONS.items():
        if path.name.endswith(ext):
            return fmt
    known = ", ".join(f"{ext} ({fmt})" for fmt, ext in EXTENSIONS.items())
    raise ExportError(f"{str(path)!r} is not a run folder, nor a file `trainwell export` writes ({known}).",
                      fix="point at a run folder or at an exported model file")


def zip_extra(blob: bytes, name: str) -> str:
    """The text of the extra file ``name`` in a TorchScript or torch.export archive (a zip whose one top folder
    holds ``extra/NAME``), read as data, without loading the archive; ``""`` when there is none."""
    import zipfile

    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        for member in archive.namelist():
            parts = member.split("/")
            if len(parts) == 3 and parts[1:] == ["extra", name]:
                return archive.read(member).decode("utf-8")
    return ""


def missing_package(package: str, fmt: str) -> ExportError:
    return ExportError(f"The {fmt} format needs the {package} package, which is not installed.",
                       fix="pip install 'trainwell[export]'")


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Keep the exporters' progress lines and warnings off the user's terminal."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def reason(error: BaseException) -> str:
    """The root cause of an exporter's failure in one line (exporters wrap it in pages of advice)."""
    while error.__cause__ is not None:
        error = error.__cause__
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = f"{type(error).__name__}: {lines[0] if lines else ''}"
    return text if len(text) <= 300 else text[:299] + "…"
