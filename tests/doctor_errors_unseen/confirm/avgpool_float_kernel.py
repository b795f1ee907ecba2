# source: https://github.com/ericsun99/MobileNet-V2-Pytorch/issues/4
# original: RuntimeError: avg_pool2d(): argument 'kernel_size' (position 2) must be tuple of ints, not float
# half: confirm
# cause mentions: //
import torch
from torch import nn

input_size = 224
features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=32, padding=1), nn.AvgPool2d(input_size / 32))
x = torch.randn(2, 3, input_size, input_size)
out = features(x)  # <- fails
