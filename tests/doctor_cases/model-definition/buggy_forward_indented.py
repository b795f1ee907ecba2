# A two-layer regressor typed in a hurry: forward ended up indented inside __init__.
import torch
import torch.nn.functional as F
from torch import nn


class Regressor(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.hidden = nn.Linear(n_in, 16)
        self.head = nn.Linear(16, 1)

        def forward(self, x):
            return self.head(torch.relu(self.hidden(x)))


torch.manual_seed(0)
x = torch.rand(128, 4)
y = (x ** 2).sum(1, keepdim=True)
reg = Regressor(4)
opt = torch.optim.Adam(reg.parameters(), lr=1e-2)
for step in range(20):
    opt.zero_grad()
    F.mse_loss(reg(x), y).backward()
    opt.step()
