# Raw-scale tabular features, standardized inside the model with statistics from the training set.
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Standardized(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        self.net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net((x - self.mean) / self.std)


rng = np.random.default_rng(0)
torch.manual_seed(0)
# house size (m2), year built, rooms, distance to centre (m): all on raw scales
X = np.stack([rng.normal(120, 40, 1000), rng.integers(1950, 2020, 1000), rng.integers(1, 8, 1000),
              rng.uniform(100, 20000, 1000)], axis=1).astype(np.float32)
price = (0.02 * X[:, 0] + 0.01 * (X[:, 1] - 1950) + 0.1 * X[:, 2] - 0.00005 * X[:, 3]).astype(np.float32)
X, price = torch.from_numpy(X), torch.from_numpy(price).unsqueeze(1)
model = Standardized(X.mean(0), X.std(0))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(6):
    for xb, yb in DataLoader(TensorDataset(X, price), batch_size=50, shuffle=True):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
print("mse", loss.item())
