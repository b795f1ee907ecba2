# source: https://github.com/yeyupiaoling/MASR/issues/64
# original: RuntimeError: `lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not need ONNX exportability.
# half: confirm
# cause mentions: enforce_sorted|sort
import torch
from torch import nn

torch.manual_seed(0)
rnn = nn.GRU(13, 32, batch_first=True)
x = torch.randn(3, 50, 13)
x_lens = torch.tensor([30, 50, 41])
packed = nn.utils.rnn.pack_padded_sequence(x, x_lens.cpu(), batch_first=True)  # <- fails
out, h = rnn(packed)
