"""unnormalized-input sweep: an MLP on digits whose pixels are fed in [0, --strength] instead of standardized."""

import torch

from _digits import accuracy, digits, finish, mlp, setup, train

scale = setup(1.0)
x, y, xv, yv = digits(scale)
model = mlp()
loss = train(model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), x, y)
finish(accuracy(model, xv, yv), loss)
