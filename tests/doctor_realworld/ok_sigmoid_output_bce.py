# expect: none
# Binary classifier whose last layer is a sigmoid, trained with BCELoss until it is confident.
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(400, 2) * 2
y = ((X[:, 0] ** 2 + X[:, 1] ** 2) < 4).float().unsqueeze(1)
model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.BCELoss()
for epoch in range(150):
    opt.zero_grad()
    loss = criterion(model(X), y)
    loss.backward()
    opt.step()
