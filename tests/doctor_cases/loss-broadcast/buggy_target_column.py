# Power output of a plant from a table whose last column is the target, sliced with [:, -1:]
# (which keeps it a column); the model's output is flattened to one value per row.
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(11)
temp, vacuum, pressure, humidity = (rng.normal(size=2000) for _ in range(4))
power = 2.0 * temp - 0.7 * vacuum + 0.3 * pressure * humidity + 0.1 * rng.normal(size=2000)
table = np.stack([temp, vacuum, pressure, humidity, power], axis=1).astype(np.float32)
inputs, target = torch.from_numpy(table[:, :-1]), torch.from_numpy(table[:, -1:])

loader = DataLoader(TensorDataset(inputs, target), batch_size=128, shuffle=True)
regressor = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
huber = nn.HuberLoss(delta=1.0)
opt = torch.optim.SGD(regressor.parameters(), lr=0.05, momentum=0.9)
torch.manual_seed(0)
for epoch in range(4):
    for xb, yb in loader:
        opt.zero_grad()
        out = regressor(xb).flatten()
        huber(out, yb).backward()
        opt.step()
    print("epoch", epoch, "done")
