# source: https://github.com/dion-jy/lstm-vae-torch/issues/2
# original: RuntimeError: For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors
# half: tune
# cause mentions: unsqueeze|num_layers
import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Linear(10, 32)
decoder = nn.LSTM(10, 32, batch_first=True)
x = torch.randn(4, 7, 10)
h_ = encoder(x[:, -1])  # (batch, hidden): the latent code
hidden = (h_.contiguous(), h_.contiguous())
out, _ = decoder(x, hidden)  # <- fails
