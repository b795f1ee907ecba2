# The weight is wrapped in a new nn.Parameter at the top of every step ("make sure it is a parameter"): the
# optimizer keeps the first one, the model uses a new one each time.
import torch
from torch import nn
torch.manual_seed(0)
x = torch.randn(256, 3)
y = x.sum(1, keepdim=True)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
init = torch.randn(1, 3)
for step in range(200):
    model.weight = nn.Parameter(init.clone())  # "make sure it is a parameter"
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(step, loss.item())
