# Tabular regression from a CSV-like array: missing cells are imputed with the column mean.
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(0)
torch.manual_seed(0)
X = rng.normal(size=(600, 6)).astype(np.float32)
y = (X @ rng.normal(size=6) + 0.1 * rng.normal(size=600)).astype(np.float32)
X[rng.random(X.shape) < 0.02] = np.nan  # empty cells, as read from a CSV
X = np.where(np.isnan(X), np.nanmean(X, axis=0), X)  # impute before anything else
X = ((X - X.mean(axis=0)) / X.std(axis=0)).astype(np.float32)
X, y = torch.from_numpy(X), torch.from_numpy(y).unsqueeze(1)

model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(5):
    perm = torch.randperm(len(X))
    for i in range(0, len(X), 50):
        idx = perm[i:i + 50]
        pred = model(X[idx])
        loss = ((pred - y[idx]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
print("last loss", loss.item())
