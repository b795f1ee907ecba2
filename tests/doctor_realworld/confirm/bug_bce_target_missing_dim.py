# expect: shape-mismatch
# source: https://www.iiask.com/34l57998.html
# Binary classifier with nn.Sigmoid output (64, 1) and BCELoss against labels of shape (64,): "Using a target size that is different to the input size".
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(640, 8)
y = (X[:, 0] - X[:, 3] > 0).float()
loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for inputs, target in loader:
        pred = model(inputs)
        loss = criterion(pred, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
