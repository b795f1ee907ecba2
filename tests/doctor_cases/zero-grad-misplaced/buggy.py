# zero_grad() placed between backward() and step(): every step uses zero gradients.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
x = torch.randn(400, 10)
y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(40):
    idx = torch.randint(0, 400, (32,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
print("final loss", loss.item())
