# expect: none
# Time-major LSTM: (seq, batch, features) and the hidden state built from x.size(1).
import torch
from torch import nn

torch.manual_seed(0)
seq = torch.randn(30, 16, 4)  # (time, batch, features)
y = seq[-5:].sum(dim=(0, 2)).unsqueeze(1)
lstm = nn.LSTM(4, 24)
head = nn.Linear(24, 1)
opt = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=5e-3)
for epoch in range(30):
    h0 = torch.zeros(1, seq.size(1), 24)
    c0 = torch.zeros(1, seq.size(1), 24)
    out, _ = lstm(seq, (h0, c0))
    loss = nn.functional.mse_loss(head(out[-1]), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
