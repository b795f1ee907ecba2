"""dead-relu sweep: an MLP on digits whose hidden layers' biases start at -(--strength)."""

import torch

from _digits import accuracy, digits, finish, mlp, setup, train

shift = setup(0.0)
x, y, xv, yv = digits()
model = mlp()
with torch.no_grad():
    for layer in (model[0], model[3]):
        layer.bias.fill_(-shift)
loss = train(model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), x, y)
finish(accuracy(model, xv, yv), loss)
