# The NumPy features converted to float32 once, and the model and data on one chosen device.
import numpy as np
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
digits = load_digits()
features = (digits.data - digits.data.mean()) / digits.data.std()
x = torch.from_numpy(features).float()
y = torch.from_numpy(digits.target.astype(np.int64))

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True):
        xb, yb = xb.to(device), yb.to(device)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
print("done", loss.item())
