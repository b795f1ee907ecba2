# expect: none
# Standardized diabetes regression with an MLP and MSELoss.
import torch
import torch.nn as nn
from sklearn.datasets import load_diabetes

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_diabetes()
X = torch.tensor(d.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(d.target, dtype=torch.float32).unsqueeze(1)
y = (y - y.mean()) / y.std()

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for epoch in range(40):
    perm = torch.randperm(len(X))
    for i in range(0, len(X), 32):
        idx = perm[i:i + 32]
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), y[idx])
        loss.backward()
        opt.step()
    if epoch % 10 == 0:
        print(epoch, loss.item())
