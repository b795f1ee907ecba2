# source: https://github.com/facebookresearch/detr/issues/499
# original: AssertionError: embed_dim must be divisible by num_heads
# half: confirm
# cause mentions: divisible|divide
import torch
from torch import nn

hidden_dim, nheads = 256, 6
encoder_layer = nn.TransformerEncoderLayer(hidden_dim, nheads, dim_feedforward=512)  # <- fails
encoder = nn.TransformerEncoder(encoder_layer, num_layers=2)
print(encoder(torch.randn(10, 2, hidden_dim)).shape)
