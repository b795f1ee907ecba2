# source: https://github.com/xindongzhang/ELAN/issues/8
# original: RuntimeError: split_with_sizes expects split_sizes to sum exactly to 128 (input tensor's size at dimension 1), but got split_sizes=[42, 42, 42]
# half: confirm
# cause mentions: sum
import torch
from torch import nn

torch.manual_seed(0)
channels, n_windows = 128, 3
proj = nn.Conv2d(3, channels, 3, padding=1)
x = proj(torch.randn(1, 3, 32, 32))
xs = torch.split(x, [channels // n_windows] * n_windows, dim=1)  # <- fails
