# expect: lr-too-high
# SGD with lr=10 on a small regression MLP.
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

model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=10)
criterion = nn.MSELoss()
for epoch in range(20):
    for i in range(0, len(X), 32):
        optimizer.zero_grad()
        loss = criterion(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
