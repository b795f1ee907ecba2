# expect: none
# source: https://github.com/rll/deepul/issues/12
# The flow-models demo's loop: loss = model.nll(x), then optimizer.zero_grad(), loss.backward(), optimizer.step() (zeroing after the forward pass is fine; the issue asked whether it was).
import math

import torch
import torch.nn as nn
import torch.utils.data as data

torch.manual_seed(0)


class AffineCoupling(nn.Module):
    def __init__(self, flip):
        super().__init__()
        self.flip = flip
        self.net = nn.Sequential(nn.Linear(1, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, x):
        x0, x1 = (x[:, 1:], x[:, :1]) if self.flip else (x[:, :1], x[:, 1:])
        log_s, t = self.net(x0).chunk(2, dim=1)
        log_s = torch.tanh(log_s)
        z1 = x1 * torch.exp(log_s) + t
        z = torch.cat([z1, x0], 1) if self.flip else torch.cat([x0, z1], 1)
        return z, log_s.sum(1)


class RealNVP2D(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([AffineCoupling(i % 2 == 1) for i in range(4)])

    def nll(self, x):
        log_det = torch.zeros(x.size(0))
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        log_pz = -0.5 * (x ** 2).sum(1) - math.log(2 * math.pi)
        return -(log_pz + log_det).mean()


theta = torch.rand(3000) * 2 * math.pi
points = torch.stack([torch.cos(theta), torch.sin(theta)], 1) * 2 + 0.1 * torch.randn(3000, 2)
train_loader = data.DataLoader(points, batch_size=128, shuffle=True)
model = RealNVP2D()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(6):
    model.train()
    for x in train_loader:
        x = x.float()
        loss = model.nll(x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
