"""vanishing-gradients sweep: digits through a stack of --strength sigmoid layers, trained with SGD."""

import torch
from torch import nn

from _digits import accuracy, digits, finish, setup, train

depth = int(setup(2))
x, y, xv, yv = digits()
layers: list[nn.Module] = []
for _ in range(depth):
    layers += [nn.Linear(64, 64), nn.Sigmoid()]
model = nn.Sequential(*layers, nn.Linear(64, 10))
loss = train(model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), x, y)
finish(accuracy(model, xv, yv), loss)
