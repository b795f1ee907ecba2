# expect: loss-broadcast
# "My linear regression always predicts the average" - nn.Linear(3, 1) fit on a numpy table, 10 full-batch steps.
import numpy as np
import torch
import torch.nn as nn

np.random.seed(0)
X_np = np.random.rand(300, 3)
y_np = X_np @ np.array([4.0, -2.0, 1.5]) + 0.5  # shape (300,)

X = torch.from_numpy(X_np).float()
y = torch.from_numpy(y_np).float()

lin = nn.Linear(3, 1)
loss_fn = nn.MSELoss()
optim = torch.optim.SGD(lin.parameters(), lr=0.5)

for i in range(10):
    y_hat = lin(X)
    loss = loss_fn(y_hat, y)
    optim.zero_grad()
    loss.backward()
    optim.step()
    print(i, loss.item())
print(lin.weight.data, lin.bias.data)
