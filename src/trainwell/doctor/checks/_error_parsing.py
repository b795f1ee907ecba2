"""Reading PyTorch's error messages, and the traceback they came with, for the error checks.

``parse(error)`` recognises a message (shape, device / dtype, out of memory) and pulls out
its numbers; ``Context`` gathers what the traceback still holds: the modules whose forward
was running, the failing module's input, the loss's input and target, the phase.
Everything here only runs once, after the script has already failed.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch
from torch import nn

from trainwell.doctor.where import _is_user, where_in_traceback

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_PACKAGES = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
_NUMS = r"\[([-\d, ]*)\]"
_SIZE = r"torch\.Size\(\[([\d, ]*)\]\)"
_DEV = r"([a-z]+(?::\d+)?)"
_MEM = r"([\d.]+ ?[KMGTP]?i?B)"
_KIND = r"(CUDA|CPU|MPS|XPU|cuda|cpu|mps|xpu|meta)"


@dataclass
class Parsed:
    """A recognised error: the check that owns it, its kind, and the regex groups."""

    check: str
    kind: str
    groups: tuple[str, ...]
    text: str  # the message it was found in


# (check id, kind, pattern). Order matters: the first match wins (memory and device
# messages can also mention sizes, so they come first).
_PATTERNS: list[tuple[str, str, str]] = [
    ("oom", "cuda", r"CUDA out of memory\.(?:.*?Tried to allocate " + _MEM + r")?"),
    ("oom", "cuda", r"CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED|CUDA ran out of memory"),
    ("oom", "mps", r"MPS backend out of memory(?:.*?Tried to allocate " + _MEM + r")?"),
    ("oom", "xpu", r"XPU out of memory(?:.*?Tried to allocate " + _MEM + r")?"),
    ("oom", "cpu", r"can't allocate memory: you tried to allocate (\d+) bytes"),
    ("oom", "cpu", r"C10 Out of Memory\. Trying to allocate (\d+)"),
    ("device-mismatch", "devices", r"Expected all tensors to be on the same device, but found at least two devices, "
                                   + _DEV + " and " + _DEV),
    ("device-mismatch", "devices_named", r"Expected all tensors to be on the same device, but got (\w+) is on "
                                         + _DEV + r", different from other tensors on " + _DEV),
    ("device-mismatch", "devices_expected", r"expected '(\w+)' to be (?:a )?" + _KIND + r"(?: tensor)?, but got (?:a )?"
                                            + _KIND),
    ("device-mismatch", "devices_expected", r"Expected object of device type (\w+) but got device type (\w+)()"),
    ("device-mismatch", "device_tensor", r"Tensor on device " + _DEV + r" is not on the expected device " + _DEV),
    ("device-mismatch", "device_rnn", r"Input and (?:parameter|hidden) tensors are not at the same device, "
                                      r"found input tensor at " + _DEV + r" and \w+ tensor at " + _DEV),
    ("device-mismatch", "type_pair", r"Input type \(([\w. ]+)\) and (?:weight|bias) type \(([\w. ]+)\) should be"),
    ("device-mismatch", "mps_input", r"Placeholder storage has not been allocated on MPS device"),
    ("device-mismatch", "index_device", r"indices should be either on cpu or on the same device as the indexed"),
    ("cuda-unavailable", "map_location", r"Attempting to deserialize object on a CUDA device"),
    ("cuda-unavailable", "no_driver", r"Found no NVIDIA driver|CUDA driver initialization failed"),
    ("cuda-unavailable", "cpu_build", r"Torch not compiled with CUDA enabled"),
    ("cuda-unavailable", "no_gpu", r"No CUDA GPUs are available"),
    ("cuda-unavailable", "no_mps", r"not linked with support for mps|MPS backend is not available"),
    ("device-mismatch", "dtype_mm", r"(?:mat1 and mat2|m1 and m2) (?:must |to )?have the same dtype, but got:? "
                                    r"(\w+) (?:and|!=) (\w+)"),
    ("device-mismatch", "dtype_rnn", r"input dtype \(torch\.(\w+)\) does not match weight dtype \(torch\.(\w+)\)"),
    ("device-mismatch", "dtype_target", r"expected target dtype to be Long or Byte, but got (\w+)()"),
    ("device-mismatch", "dtype_cast", r"result type (\w+) can't be cast to the desired output type (\w+)"),
    ("device-mismatch", "dtype_index", r"'indices' to have one of the following scalar types: [\w, ]+; but got "
                                       r"([\w.]+) instead()"),
    ("device-mismatch", "dtype_scalar", r"expected scalar type (\w+) but found (\w+)"),
    ("device-mismatch", "dtype_found", r"Found dtype (\w+) but expected (\w+)"),
    ("model-definition", "empty_params", r"optimizer got an empty parameter list"),
    ("model-definition", "init_args", r"(\w+)\.__init__\(\) (?:takes 1 positional argument but \d+ were given|got an "
                                      r"unexpected keyword argument)"),
    ("model-definition", "no_attribute", r"'(\w+)' object has no attribute '(\w+)'"),
    ("model-definition", "no_forward", r'Module \[(\w+)\] is missing the required "forward" function'),
    ("shape-mismatch", "matmul", r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)"),
    ("shape-mismatch", "matmul", r"size mismatch, m1: \[(\d+) x (\d+)\], m2: \[(\d+) x (\d+)\]"),  # torch < 1.7
    ("shape-mismatch", "conv_rank", r"Expected (\d+)-dimensional input for \d+-dimensional weight \[[\d, ]*\](), but "
                                    r"got \d+-dimensional input of size " + _NUMS),  # torch < 1.11
    ("shape-mismatch", "conv_rank", r"Expected \d+D \(unbatched\) or (\d+)D \(batched\) input to (\w+), but got "
                                    r"input of size: " + _NUMS),
    ("shape-mismatch", "conv_channels", r"Given (?:groups|transposed)=\d+, weight of size " + _NUMS
                                        + r", expected input" + _NUMS + r" to have (\d+) channels, but got (\d+)"),
    ("shape-mismatch", "rnn_features", r"input\.size\(-1\) must be equal to input_size\. Expected (\d+), got (\d+)"),
    ("shape-mismatch", "rnn_hidden", r"Expected hidden(?:\[\d\])? size \(([\d, ]+)\), got \[([\d, ]+)\]"),
    ("shape-mismatch", "rnn_rank", r"(\w+): Expected input to be 2D or 3D, got (\d+)D"),
    ("shape-mismatch", "batch_size", r"Expected input batch_size \((\d+)\) to match target batch_size \((\d+)\)"),
    ("shape-mismatch", "state_dict", r"Error\(s\) in loading state_dict for (\w+)"),
    ("shape-mismatch", "broadcast", r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
                                    r"non-singleton dimension (\d+)"),
    ("shape-mismatch", "broadcast", r"The expanded size of the tensor \((\d+)\) must match the existing size \((\d+)\) "
                                    r"at non-singleton dimension (\d+)"),
    ("shape-mismatch", "inplace", r"output with shape " + _NUMS + r" doesn't match the broadcast shape " + _NUMS),
    ("shape-mismatch", "norm_features", r"running_mean should contain (\d+) elements not (\d+)"),
    ("shape-mismatch", "norm_rank", r"expected (4D|2D or 3D|5D) input \(got (\d+)D input\)"),
    ("shape-mismatch", "layer_norm", r"Given normalized_shape=" + _NUMS + r", expected input with shape \[\*, "
                                     r"[\d, ]*\], but got input of size ?" + _NUMS),
    ("shape-mismatch", "target_size", r"[Tt]arget size \(" + _SIZE + r"\).*?input size \(" + _SIZE + r"\)"),
    ("shape-mismatch", "target_rank", r"0D or 1D target tensor expected, multi-target not supported"),
    ("shape-mismatch", "target_probs", r"Expected floating point type for target with class probabilities"),
    ("shape-mismatch", "target_seq", r"Expected target size " + _NUMS + r", got " + _NUMS),
    ("shape-mismatch", "target_range", r"Target (-?\d+) is out of bounds"),
    ("shape-mismatch", "index_range", r"index out of range in self"),
    ("shape-mismatch", "view", r"shape '" + _NUMS + r"' is invalid for input of size (\d+)"),
    ("shape-mismatch", "stack", r"stack expects each tensor to be equal size, but got " + _NUMS + r" at entry \d+ "
                                r"and " + _NUMS),
    ("shape-mismatch", "cat", r"Sizes of tensors must match except in dimension (\d+)\. Expected size (\d+) but got "
                              r"size (\d+)"),
    ("shape-mismatch", "too_small", r"Kernel size can't be greater than actual input size|Output size is too small"),
    ("shape-mismatch", "attention_dim", r"was expecting embedding dimension of (\d+), but got (\d+)"),
    ("shape-mismatch", "dot", r"inconsistent tensor size, expected tensor \[\d+\] and src \[\d+\] to have the same "
                              r"number of elements, but got (\d+) and (\d+) elements"),
    ("shape-mismatch", "mv", r"size mismatch, got input \((\d+)\), mat \((\d+)x(\d+)\), vec \((\d+)\)"),
    ("shape-mismatch", "dim_range", r"Dimension out of range \(expected to be in range of \[(-?\d+), (-?\d+)\], but "
                                    r"got (-?\d+)\)"),
    ("shape-mismatch", "too_many_indices", r"too many indices for tensor of dimension (\d+)"),
    ("shape-mismatch", "index_bounds", r"index (-?\d+) is out of bounds for dimension (\d+) with size (\d+)"),
    ("shape-mismatch", "bmm", r"Expected size for first two dimensions of batch2 tensor to be: " + _NUMS
                              + r" but got: " + _NUMS),
]


@functools.cache
def _compiled() -> list[tuple[str, str, re.Pattern[str]]]:
    """The patterns compiled, on the first error (compiling them all costs a few ms a run that never fails)."""
    return [(c, k, re.compile(p, re.S)) for c, k, p in _PATTERNS]


def chain(error: BaseException) -> Iterator[BaseException]:
    """The error, then what caused it (``raise ... from``, or an error raised while handling another)."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ if e.__cause__ is not None else None if e.__suppress_context__ else e.__context__


def parse(error: BaseException) -> Parsed | None:
    """Recognise the error (or one it was raised from); ``None`` when it is none of ours."""
    for e in chain(error):
        text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        for check, kind, rx in _compiled():
            m = rx.search(text)
            if m:
                return Parsed(check, kind, tuple(g or "" for g in m.groups()), text)
        if isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError":
            return Parsed("oom", "memory", (), text)
    return None


def is_own_code(filename: str) -> bool:
    """Whether ``filename`` is the user's own code: not torch's, trainwell's, Python's or an installed package's."""
    return _is_user(filename) and not any(d in filename for d in _PACKAGES)


def user_line(error: BaseException) -> str | None:
    """The user's line in the traceback, skipping installed packages (e.g. torchvision) as well."""
    found = where_in_traceback(error.__traceback__)
    if found is None or not any(d in found for d in _PACKAGES):
        return found
    tb, last = error.__traceback__, None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if is_own_code(name):
            last = (name, tb.tb_lineno)
        tb = tb.tb_next
    if last is None:
        return found
    rel = os.path.relpath(last[0])
    return f"{rel if not rel.startswith('..') else last[0]}:{last[1]}"


def ints(text: str) -> tuple[int, ...]:
    """``"4, 1, 28"`` -> ``(4, 1, 28)``."""
    return tuple(int(v) for v in re.findall(r"-?\d+", text))


def shape(x: Any) -> tuple[int, ...] | None:
    return tuple(x.shape) if isinstance(x, torch.Tensor) else None


def fmt(s: tuple[int, ...] | None) -> str:
    """A shape as users write it: ``(32, 1, 28, 28)``, ``(8,)``."""
    return "?" if s is None else str(tuple(int(v) for v in s))


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} PiB"  # pragma: no cover


def to_bytes(text: str) -> int | None:
    """``"2.00 GiB"`` -> bytes (``None`` when it is not a size)."""
    m = re.fullmatch(r"([\d.]+) ?([KMGTP]?)i?B", text.strip())
    return int(float(m.group(1)) * 1024 ** " KMGTP".index(m.group(2) or " ")) if m else None


def machine_memory(kind: str) -> int | None:
    """Total memory of the device that ran out: the GPU's, or this machine's RAM."""
    try:
        if kind == "cuda" and torch.cuda.is_initialized():
            return int(torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory)
        if kind in ("cpu", "memory"):
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, RuntimeError, AttributeError):
        pass
    return None


def square_side(n: int) -> int | None:
    s = math.isqrt(n)
    return s if s > 1 and s * s == n else None


@dataclass
class Context:
    """What the traceback of a failed call still tells."""

    frames: list[FrameType] = field(default_factory=list)  # outermost first
    modules: list[nn.Module] = field(default_factory=list)  # forwards running when it broke, outermost first

    @classmethod
    def of(cls, error: BaseException, session_stack: list[nn.Module]) -> Context:
        frames: list[FrameType] = []
        tb = error.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        ctx = cls(frames)
        # The module calls in the traceback are exact for this error (the session's stack can hold
        # stale entries after an error the script caught); the session's stack only stands in for
        # compiled code, whose forward leaves no Python frame.
        ctx.modules = [m for _, m in ctx._calls()] or (list(session_stack) if ctx.through("_dynamo") else [])
        return ctx

    def _calls(self) -> list[tuple[FrameType, nn.Module]]:
        return [(f, f.f_locals["self"]) for f in self.frames
                if f.f_code.co_name == "_call_impl" and isinstance(f.f_locals.get("self"), nn.Module)]

    @property
    def failing(self) -> nn.Module | None:
        return self.modules[-1] if self.modules else None

    def innermost(self, types: tuple[type, ...]) -> nn.Module | None:
        return next((m for m in reversed(self.modules) if isinstance(m, types)), None)

    def module_args(self, module: nn.Module | None) -> tuple[Any, ...]:
        """The positional arguments ``module`` was called with in this traceback."""
        for f, m in reversed(self._calls()):
            if m is module:
                return tuple(f.f_locals.get("args") or ())
        return ()

    def module_input(self, module: nn.Module | None) -> torch.Tensor | None:
        args = self.module_args(module)
        return args[0] if args and isinstance(args[0], torch.Tensor) else None

    def loss_tensors(self) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(input, target) of the loss function that failed, if a loss was running."""
        for f in reversed(self.frames):
            if f.f_code.co_filename.startswith(_TORCH_DIR) and f.f_code.co_filename.endswith("functional.py"):
                loc = f.f_locals
                if isinstance(loc.get("input"), torch.Tensor) and isinstance(loc.get("target"), torch.Tensor):
                    return loc["input"], loc["target"]
        return None, None

    def through(self, part: str, names: tuple[str, ...] = ()) -> bool:
        """Whether a torch frame under ``part`` (e.g. ``"optim"``), optionally of a named function, failed."""
        prefix = _TORCH_DIR + part.replace("/", os.sep)
        return any(f.f_code.co_filename.startswith(prefix) and (not names or f.f_code.co_name in names)
                   for f in self.frames)

    def through_package(self, name: str) -> bool:
        """Whether a frame of an installed package (e.g. ``torchvision``) is in the traceback."""
        part = os.sep + name + os.sep
        return any(part in f.f_code.co_filename for f in self.frames)

    def building(self) -> tuple[nn.Module, dict[str, int]] | None:
        """A module whose ``__init__`` was running (a layer being created), with its integer arguments."""
        for f in reversed(self.frames):
            if f.f_code.co_name == "__init__" and isinstance(f.f_locals.get("self"), nn.Module):
                names = f.f_code.co_varnames[1:f.f_code.co_argcount]
                return f.f_locals["self"], {n: f.f_locals[n] for n in names if type(f.f_locals.get(n)) is int}
        return None

    def name_of(self, module: nn.Module | None) -> str:
        """The module's dotted name inside the outermost running module ("" for that module itself)."""
        if module is None or not self.modules:
            return ""
        for name, m in self.modules[0].named_modules():
            if m is module:
                return name
        return ""


_DEFAULTS = re.compile(r", (?:eps=1e-05|momentum=0\.1|affine=True|bias=True|track_running_stats=True|"
                       r"elementwise_affine=True|stride=\(1(?:, 1)*,?\)|stride=1)")


def describe(module: nn.Module) -> str:
    """A leaf layer as its repr (``Linear(in_features=10, ...)``), anything else as its class name."""
    if next(module.children(), None) is None:
        text = _DEFAULTS.sub("", repr(module))
        return text if len(text) <= 120 else type(module).__name__
    return type(module).__name__


def has_conv(module: nn.Module | None) -> bool:
    return module is not None and any(isinstance(m, nn.modules.conv._ConvNd) for m in module.modules())
