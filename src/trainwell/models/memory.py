"""``model.channels_last``: the built-in cnn's weights and input batches in channels_last memory format.

In channels_last (NHWC) order, convolutions on recent NVIDIA GPUs use tensor cores without
transposing every activation; on CPU the gain is small or negative, so ``auto`` turns it on for
CUDA only. The values computed are the same in either format.
"""

from __future__ import annotations

import torch
from torch import nn

from trainwell._errors import ConfigError
from trainwell.models.layers import Blocks


def use_channels_last(model: nn.Module, setting: bool | str, device_type: str) -> bool:
    """Convert the model's conv blocks to channels_last when ``setting`` (``auto``, ``True``, ``False``) asks for it
    on ``device_type``; return whether it did. Call it after the model is on its device."""
    convs = [m for m in model.modules() if isinstance(m, Blocks) and any(isinstance(x, nn.Conv2d) for x in m)]
    if setting is True and not convs:
        raise ConfigError("model.channels_last=true: this model has none of the built-in cnn's conv blocks to convert.",
                          fix="--set model.channels_last=auto (or use --model cnn)")
    if not convs or not (setting is True or (setting == "auto" and device_type == "cuda")):
        return False
    model.to(memory_format=torch.channels_last)  # 4-D weights only; Linear weights keep their layout
    for blocks in convs:
        blocks.channels_last = True  # and each input batch is converted on the way in
    return True
