# Ten full-batch SGD steps as a quick check of a regression model; the learning rate was typed as 1e-7
# (meant 1e-1), so the weights hardly move.
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(400, 6)
y = X @ torch.randn(6, 1) + 0.5
model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-7)
for step in range(10):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 4))
