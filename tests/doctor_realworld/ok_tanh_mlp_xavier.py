# expect: none
# A tanh MLP with Xavier initialization on standardized inputs.
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(600, 12)
y = torch.tanh(X[:, :4].sum(1, keepdim=True))
model = nn.Sequential(nn.Linear(12, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
for m in model:
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain("tanh"))
        nn.init.zeros_(m.bias)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(20):
    for i in range(0, 600, 100):
        opt.zero_grad()
        nn.functional.mse_loss(model(X[i:i + 100]), y[i:i + 100]).backward()
        opt.step()
