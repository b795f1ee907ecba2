"""exploding-gradients sweep: digits through 8 ReLU layers initialised at --strength times Kaiming's scale,
trained with SGD and no gradient clipping."""

import torch
from torch import nn

from _digits import accuracy, digits, finish, setup, train

scale = setup(1.0)
x, y, xv, yv = digits()
layers: list[nn.Module] = []
for _ in range(8):
    layers += [nn.Linear(64, 64), nn.ReLU()]
model = nn.Sequential(*layers, nn.Linear(64, 10))
with torch.no_grad():
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            m.weight *= scale
            m.bias.zero_()
loss = train(model, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9), x, y)
finish(accuracy(model, xv, yv), loss)
