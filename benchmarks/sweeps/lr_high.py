"""lr-too-high sweep: an MLP on digits trained with Adam at --strength times its good learning rate (1e-3)."""

import torch

from _digits import accuracy, digits, finish, mlp, setup, train

factor = setup(1.0)
x, y, xv, yv = digits()
model = mlp()
loss = train(model, torch.optim.Adam(model.parameters(), lr=1e-3 * factor), x, y)
finish(accuracy(model, xv, yv), loss)
