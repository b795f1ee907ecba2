"""A regression model with three outputs with one output per target column: shapes match."""
import torch
from torch import nn

torch.manual_seed(3)
features = torch.rand(256, 6)
price = (features @ torch.linspace(1.0, 2.0, 6)).unsqueeze(1)  # (256, 1)

regressor = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(regressor.parameters(), lr=1e-2)
criterion = nn.MSELoss()
for epoch in range(30):
    for start in range(0, 256, 64):
        opt.zero_grad()
        err = criterion(regressor(features[start:start + 64]), price[start:start + 64])
        err.backward()
        opt.step()
print(f"final loss {err.item():.3f}")
