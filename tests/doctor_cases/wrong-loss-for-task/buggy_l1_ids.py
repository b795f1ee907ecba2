# Three product categories predicted as one number with L1Loss against the integer category id.
import torch
from torch import nn

torch.manual_seed(0)
n = 600
category = torch.randint(0, 3, (n,))
x = torch.randn(n, 5) * 0.3
x[:, 0] += category.float()
model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1), nn.Flatten(0))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
l1 = nn.L1Loss()
for epoch in range(3):
    for i in range(0, n, 40):
        pred = model(x[i:i + 40])
        loss = l1(pred, category[i:i + 40])
        opt.zero_grad()
        loss.backward()
        opt.step()
print("loss", loss.item())
