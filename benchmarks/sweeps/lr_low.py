"""lr-too-low sweep: an MLP on digits trained with Adam at its good learning rate (1e-3) divided by --strength."""

import torch

from _digits import accuracy, digits, finish, mlp, setup, train

divisor = setup(1.0)
x, y, xv, yv = digits()
model = mlp()
loss = train(model, torch.optim.Adam(model.parameters(), lr=1e-3 / divisor), x, y)
finish(accuracy(model, xv, yv), loss)
