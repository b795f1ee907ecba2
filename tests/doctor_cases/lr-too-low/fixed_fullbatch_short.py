# The same ten full-batch steps with the learning rate meant: 1e-1.
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(400, 6)
y = X @ torch.randn(6, 1) + 0.5
model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
for step in range(10):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 4))
