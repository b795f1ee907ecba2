# source: https://github.com/1adrianb/face-alignment/issues/259
# original: ValueError: At least one stride in the given numpy array is negative, and tensors with negative strides are not currently supported. (You can probably work around this by making a copy of your array  with array.copy().)
# half: tune
# cause mentions: copy
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(0)
image = rng.random((32, 32, 3), dtype=np.float32)
img = image[..., ::-1].transpose(2, 0, 1)  # BGR -> RGB, HWC -> CHW
x = torch.from_numpy(img).unsqueeze(0)  # <- fails
print(nn.Conv2d(3, 4, 3)(x).shape)
