# The same float64 regression with the hidden layers in an nn.ModuleList, which .double() converts.
import torch
from torch import nn


class PotentialNet(nn.Module):
    def __init__(self, width=32, depth=2):
        super().__init__()
        self.inp = nn.Linear(3, width)
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.out = nn.Linear(width, 1)

    def forward(self, r):
        h = torch.tanh(self.inp(r))
        for layer in self.layers:
            h = torch.tanh(layer(h))
        return self.out(h)


torch.manual_seed(0)
r = torch.randn(256, 3, dtype=torch.float64)
energy = 1.0 / (1.0 + (r ** 2).sum(1, keepdim=True))
model = PotentialNet().double()
opt = torch.optim.LBFGS(model.parameters(), max_iter=5)


def closure():
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(r), energy)
    loss.backward()
    return loss


for it in range(5):
    opt.step(closure)
