# expect: none
# Stochastic gradient descent one 1-D sample at a time, as in an intro course.
import torch
from torch import nn

torch.manual_seed(0)
xs = torch.randn(80, 3)
ys = (xs[:, 0] - xs[:, 2] > 0).long()
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    for x, y in zip(xs, ys):
        out = model(x)                      # shape (2,), no batch dimension
        loss = nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
