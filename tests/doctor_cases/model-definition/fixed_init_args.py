# The same argparse script with the constructor spelt __init__.
import argparse

import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Linear(n_hidden, 1))

    def forward(self, x):
        return self.body(x)


parser = argparse.ArgumentParser()
parser.add_argument("--hidden", type=int, default=32)
args = parser.parse_args()
torch.manual_seed(0)
x = torch.randn(100, 5)
y = x.sum(1, keepdim=True)
model = Regressor(5, args.hidden)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(20):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
