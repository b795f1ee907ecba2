"""zero-grad-missing sweep: a share (--strength) of the steps skip optimizer.zero_grad() (1: never cleared)."""

import torch
from torch import nn

from _digits import accuracy, digits, finish, mlp, setup

share = setup(0.0)
x, y, xv, yv = digits()
model = mlp()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
step = 0
for epoch in range(8):
    perm = torch.randperm(len(y))
    for i in range(0, len(y), 32):
        idx = perm[i:i + 32]
        if int((step + 1) * share) == int(step * share):  # skips `share` of the steps, evenly spread
            optimizer.zero_grad()
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
        step += 1
finish(accuracy(model, xv, yv), loss.item())
