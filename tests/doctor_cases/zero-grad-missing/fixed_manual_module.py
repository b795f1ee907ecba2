# A tiny classifier updated by hand through model.parameters(), with .data; model.zero_grad() each iteration.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
x = torch.randn(300, 5)
y = (x[:, 0] * x[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
step_size = 0.1
for it in range(60):
    model.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-step_size)
