# source: https://github.com/facebookresearch/mmf/issues/224
# original: RuntimeError: Tensors must have same number of dimensions: got 2 and 3
# half: tune
# cause mentions: dimensions
import torch
from torch import nn

torch.manual_seed(0)
image_feat = torch.randn(8, 36, 64)  # (batch, regions, features)
h2 = torch.randn(8, 128)
embedding = torch.randn(8, 32)
lstm = nn.LSTMCell(128 + 64 + 32, 128)
image_feat_mean = image_feat.mean(1, keepdim=True)  # keeps a regions axis of 1
h1, c1 = lstm(torch.cat([h2, image_feat_mean, embedding], dim=1))  # <- fails
