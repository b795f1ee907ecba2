"""shape-mismatch / device-mismatch / cuda-unavailable / model-definition / oom: PyTorch's errors translated
into plain words.

They act only in ``on_error``, after the script has already failed: the message is parsed
(``_error_parsing``), the traceback tells which layer was running and what it received,
and the finding says what was expected, what came, the likely cause and the change to make.
The script's own traceback and exit code stay as they are. Correct scripts never raise, so
these checks cannot fire on them; the only per-step work is remembering a few sizes. One form of
model-definition does not crash: layers kept in a plain list beside registered ones (``_unregistered``),
seen on the model calls of sampled steps.
"""

from __future__ import annotations

import torch
from torch import nn

from trainwell.doctor.check import Text, register, sampled_only
from trainwell.doctor.events import ForwardEvent, StepEvent
from trainwell.doctor.checks._error_base import ErrorCheck
from trainwell.doctor.checks._unregistered import UnregisteredLayers
from trainwell.doctor.checks._batch_first import TimeMajor, watch
from trainwell.doctor.checks._shape_errors import (_attention_dim, _batch_size, _bmm, _broadcast, _cat, _ce_target,
                                                   _conv_channels, _conv_rank, _index_range, _inplace, _layer_norm,
                                                   _matmul, _norm_features, _norm_rank, _rnn_features, _rnn_hidden,
                                                   _rnn_rank, _stack, _state_dict, _target_range, _target_size,
                                                   _too_small, _view)
from trainwell.doctor.checks._device_errors import (_cuda_unavailable, _device_misc, _devices, _dtype_loss,
                                                    _dtype_mm, _dtype_rnn, _move_fix, _type_pair)
from trainwell.doctor.checks._op_errors import _dim_range, _dot, _index_bounds, _mv, _too_many_indices
from trainwell.doctor.checks._model_errors import _empty_params, _misspelt_init, _missing_forward, unregistered_first
from trainwell.doctor.checks._oom_errors import _REMEDIES, _oom


@register
class ShapeMismatch(ErrorCheck):
    id = "shape-mismatch"
    severity = "error"
    summary = "a shape error explained: which layer, what it expected, what it got, and the fix"
    text = {
        "en": Text(title="Tensor shapes do not fit", message="PyTorch stopped with a shape error{place}. {explain}",
                   fix="{fix}"),
        "zh": Text(title="张量形状不匹配", message="PyTorch 因形状错误而停止{place}。{explain}", fix="{fix}"),
    }
    fallback = ("print the shapes going into that line (print(x.shape)) and make them what the layer or operation "
                "expects", "打印进入那一行的张量形状（print(x.shape)），让它们符合该层或运算的要求")
    explainers = {"matmul": _matmul, "conv_rank": _conv_rank, "conv_channels": _conv_channels,
                  "rnn_features": _rnn_features, "rnn_rank": _rnn_rank, "rnn_hidden": _rnn_hidden,
                  "inplace": _inplace, "batch_size": _batch_size,
                  "state_dict": _state_dict, "broadcast": _broadcast, "norm_features": _norm_features,
                  "norm_rank": _norm_rank, "layer_norm": _layer_norm, "target_size": _target_size,
                  "target_rank": _ce_target, "target_probs": _ce_target, "target_seq": _ce_target,
                  "target_range": _target_range, "index_range": _index_range, "view": _view, "stack": _stack,
                  "cat": _cat, "too_small": _too_small, "attention_dim": _attention_dim, "bmm": _bmm,
                  "dot": _dot, "mv": _mv, "dim_range": _dim_range, "too_many_indices": _too_many_indices,
                  "index_bounds": _index_bounds}

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.time_major: TimeMajor | None = None  # the last non-batch_first RNN seen reading a 3-D input

    @sampled_only  # (the last model call's batch and output shapes are the session's ``last_forward``)
    def on_forward(self, ev: ForwardEvent) -> None:
        if not ev.leaf_calls and not isinstance(ev.module, nn.RNNBase):
            return  # nothing for watch() to see
        x = ev.inputs[0] if ev.inputs else None
        for module, inp, _ in ((ev.module, x, ev.output), *ev.leaf_calls):  # leaf calls: sampled steps and first calls
            tm = watch(module, inp)
            if tm is not None:
                self.time_major = tm


@register
class DeviceMismatch(ErrorCheck):
    id = "device-mismatch"
    severity = "error"
    summary = "tensors on different devices (or with different dtypes) in one operation, explained with the fix"
    text = {
        "en": Text(title="Tensors on different devices or with different dtypes",
                   message="PyTorch stopped because tensors meeting in one operation differ in device or dtype"
                           "{place}. {explain}", fix="{fix}"),
        "zh": Text(title="张量的设备或数据类型不一致",
                   message="PyTorch 停止了：参与同一运算的张量所在设备或数据类型不一致{place}。{explain}", fix="{fix}"),
    }
    fallback = _move_fix(False)
    explainers = {k: unregistered_first(v) for k, v in {
        "devices": _devices, "devices_named": _devices, "devices_expected": _devices, "device_tensor": _devices,
        "device_rnn": _devices, "type_pair": _type_pair, "dtype_mm": _dtype_mm, "dtype_rnn": _dtype_rnn,
        "dtype_target": _dtype_loss, "dtype_cast": _dtype_loss, "dtype_index": _dtype_loss,
        "dtype_scalar": _dtype_loss, "dtype_found": _dtype_loss, "mps_input": _device_misc,
        "index_device": _device_misc}.items()}


@register
class CudaUnavailable(ErrorCheck):
    id = "cuda-unavailable"
    severity = "error"
    summary = "the script asks for a GPU this machine or this PyTorch cannot use, explained with the fix"
    text = {
        "en": Text(title="No usable GPU", message="The script asked for a GPU{place}, but PyTorch cannot use one here. "
                                                  "{explain}", fix="{fix}"),
        "zh": Text(title="没有可用的 GPU", message="脚本要求使用 GPU{place}，但 PyTorch 在这里用不了 GPU。{explain}",
                   fix="{fix}"),
    }
    fallback = _move_fix(False)
    explainers = {k: _cuda_unavailable for k in ("no_driver", "cpu_build", "no_gpu", "no_mps", "map_location")}


@register
class ModelDefinition(ErrorCheck):
    id = "model-definition"
    severity = "error"
    summary = "a model class written wrongly (misspelt __init__ / forward, layers in a plain list), explained"
    text = {
        "en": Text(title="The model class is not set up the way PyTorch needs",
                   message="PyTorch could not use the model{place}. {explain}", fix="{fix}"),
        "zh": Text(title="模型类的写法不符合 PyTorch 的要求", message="PyTorch 无法使用这个模型{place}。{explain}", fix="{fix}"),
    }
    fallback = ("define the layers in __init__ (after super().__init__()) and the computation in forward(self, x)",
                "在 __init__ 里（先调用 super().__init__()）定义各层，在 forward(self, x) 里写计算")
    explainers = {"empty_params": _empty_params, "no_forward": _missing_forward, "init_args": _misspelt_init,
                  "no_attribute": _misspelt_init}

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.unregistered = UnregisteredLayers()

    @sampled_only
    def on_forward(self, ev: ForwardEvent) -> None:
        """Some layers kept in a plain list or dict: no crash, but they never train (``_unregistered``)."""
        if self.reported:
            return
        found = self.unregistered.look(self.session, ev)
        if found is not None:
            self.explain(ev.where, found, {})


@register
class OutOfMemory(ErrorCheck):
    id = "oom"
    severity = "error"
    summary = "out of memory explained: in forward, backward or elsewhere, with the remedies in order"
    text = {
        "en": Text(title="Out of memory", message="The script ran out of memory{place}{size}. {explain}", fix="{fix}"),
        "zh": Text(title="内存不足", message="脚本在{place}内存不足{size}。{explain}", fix="{fix}"),
    }
    fallback = _REMEDIES["forward"][1]
    explainers = {k: _oom for k in ("cuda", "mps", "xpu", "cpu", "memory")}

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.memory: list[tuple[int, int]] = []  # (step, bytes allocated on the GPU) on sampled steps

    @sampled_only
    def on_step(self, ev: StepEvent) -> None:
        # One cheap counter read on sampled steps, only once CUDA is in use: shows memory that creeps up.
        if torch.cuda.is_initialized():
            self.memory.append((self.session.step, torch.cuda.memory_allocated()))
            del self.memory[:-20]
