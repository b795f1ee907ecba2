"""eval-mode-missing sweep: an MLP with Dropout(--strength) validated every epoch without model.eval()."""

import torch
from torch import nn

from _digits import accuracy, digits, finish, mlp, setup

p = setup(0.0)
x, y, xv, yv = digits()
model = mlp(dropout=p)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(8):
    model.train()
    for i in range(0, len(y), 32):
        optimizer.zero_grad()
        loss = loss_fn(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: validation accuracy {accuracy(model, xv, yv):.3f}")  # model.eval() missing
finish(accuracy(model, xv, yv), loss.item())
