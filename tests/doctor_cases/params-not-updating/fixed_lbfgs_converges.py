"""Correct: LBFGS with a closure solves a least-squares fit in its first step and then stops moving."""
import torch
from torch import nn
torch.manual_seed(0)
x = torch.randn(200, 5); w = torch.randn(5, 1); y = x @ w + 0.01 * torch.randn(200, 1)
model = nn.Linear(5, 1)
opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20)
loss_fn = nn.MSELoss()
for epoch in range(15):
    def closure():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss
    loss = opt.step(closure)
print("loss", loss.item())
