# expect: none
# A GRU cell written by hand (sigmoid gates, tanh candidate) unrolled over short sequences.
import torch
from torch import nn


class HandGRU(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.n_hidden = n_hidden
        self.gates = nn.Linear(n_in + n_hidden, 2 * n_hidden)
        self.cand = nn.Linear(n_in + n_hidden, n_hidden)
        self.head = nn.Linear(n_hidden, 1)

    def forward(self, seq):
        h = seq.new_zeros(seq.size(0), self.n_hidden)
        for t in range(seq.size(1)):
            xh = torch.cat([seq[:, t], h], dim=1)
            z, r = torch.sigmoid(self.gates(xh)).chunk(2, dim=1)
            n = torch.tanh(self.cand(torch.cat([seq[:, t], r * h], dim=1)))
            h = (1 - z) * h + z * n
        return self.head(h)


torch.manual_seed(0)
seq = torch.randn(64, 12, 3)
target = seq[:, :, 0].mean(1, keepdim=True)
model = HandGRU(3, 24)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(40):
    opt.zero_grad()
    nn.functional.mse_loss(model(seq), target).backward()
    opt.step()
