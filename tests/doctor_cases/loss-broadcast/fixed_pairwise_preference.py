"""Scores from pairwise preferences: P[i, j] = 1 when item i was preferred to item j. The linear pairwise loss
weighs every score gap s_i - s_j, an (N, N) difference of the model's (N, 1) output with its transpose."""
import torch
from torch import nn

torch.manual_seed(21)
items = torch.randn(400, 10)
quality = items @ torch.randn(10)
net = nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for step in range(100):
    idx = torch.randperm(400)[:32]
    q = quality[idx]
    P = (q[:, None] > q[None, :]).float()
    s = net(items[idx])
    loss = -((s - s.T).tanh() * P).mean() + 1e-3 * (s ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(round(loss.item(), 4))
