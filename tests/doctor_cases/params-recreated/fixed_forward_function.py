# The same function-style network using the output layer created once, which the optimizer trains.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(128, 6)
y = torch.sin(x[:, :1]) + x[:, 1:2]

hidden = nn.Parameter(torch.randn(6, 32) * 0.4)
head = nn.Parameter(torch.randn(32, 1) * 0.2)
optimizer = torch.optim.SGD([hidden, head], lr=0.05)


def predict(x):
    return torch.relu(x @ hidden) @ head


for step in range(50):
    optimizer.zero_grad()
    loss = ((predict(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
