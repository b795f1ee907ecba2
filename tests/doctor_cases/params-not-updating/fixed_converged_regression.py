"""Correct: plain SGD on a noise-free linear fit converges exactly; later updates round away in float32."""
import torch
from torch import nn
torch.manual_seed(0)
x = torch.randn(256, 3); y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(600):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print("loss", loss.item())
