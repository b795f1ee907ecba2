# The starting weight is copied into the existing parameter once, in place, before the loop.
import torch
from torch import nn
torch.manual_seed(0)
x = torch.randn(256, 3)
y = x.sum(1, keepdim=True)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
init = torch.randn(1, 3)
with torch.no_grad():
    model.weight.copy_(init)  # set the starting values once, in place: the optimizer keeps the same parameter
for step in range(200):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(step, loss.item())
