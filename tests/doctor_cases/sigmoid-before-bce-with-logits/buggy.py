# Binary classifier ending in nn.Sigmoid, trained with BCEWithLogitsLoss.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
n = 800
x = torch.randn(n, 10)
y = ((x[:, 0] + 0.5 * x[:, 1] - x[:, 2]) > 0).float().unsqueeze(1)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
criterion = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True):
        opt.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        opt.step()
print("loss", loss.item())
