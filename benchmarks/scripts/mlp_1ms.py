"""A training script whose step is cheap (about 1 ms on one CPU thread): 3,000 steps of a
32 -> 256 -> 256 -> 10 MLP on synthetic data, so the doctor's per-step cost is what shows."""

import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(4096, 32)
y = (x[:, :10].argmax(1) + (x[:, 10] > 0).long()) % 10
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()

for step in range(3000):
    i = (step * 64) % 4096
    xb, yb = x[i:i + 64], y[i:i + 64]
    optimizer.zero_grad()
    loss = loss_fn(model(xb), yb)
    loss.backward()
    optimizer.step()
model.eval()
with torch.no_grad():
    accuracy = (model(x).argmax(1) == y).float().mean().item()
print(f"train accuracy {accuracy:.3f}")
