# A full-batch training function for a small classifier, run for 15 iterations as a first try;
# optimizer.step() was forgotten, so the model never changes and the loss is the same every time.
import torch
from torch import nn


def train(model, x, y, iterations=15, lr=0.05):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    history = []
    for _ in range(iterations):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        history.append(loss.item())
    return history


torch.manual_seed(0)
x = torch.randn(300, 8)
y = (x[:, 0] * 2 + x[:, 1] > 0).long()
print(train(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)), x, y))
