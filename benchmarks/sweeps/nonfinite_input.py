"""nonfinite-input sweep: a share (--strength) of the training rows of digits hold a NaN pixel."""

import torch

from _digits import accuracy, digits, finish, mlp, setup, train

share = setup(0.0)
x, y, xv, yv = digits()
bad = torch.randperm(len(y), generator=torch.Generator().manual_seed(1))[: round(share * len(y))]
x[bad, 5] = float("nan")  # a missing value in these rows
model = mlp()
loss = train(model, torch.optim.Adam(model.parameters(), lr=1e-3), x, y)
finish(accuracy(model, xv, yv), loss)
