# Digits features loaded through NumPy (float64) and fed straight to a float32 model.
import numpy as np
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
digits = load_digits()
features = (digits.data - digits.data.mean()) / digits.data.std()  # a float64 NumPy array
x = torch.from_numpy(features)
y = torch.from_numpy(digits.target.astype(np.int64))

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
