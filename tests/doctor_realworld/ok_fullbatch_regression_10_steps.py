# expect: none
# Full-batch regression on standardized features, ten Adam steps (a quick sanity run).
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(500, 8)
y = X @ torch.randn(8, 1) + 0.1 * torch.randn(500, 1)
X = (X - X.mean(0)) / X.std(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(10):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
print(loss.item())
