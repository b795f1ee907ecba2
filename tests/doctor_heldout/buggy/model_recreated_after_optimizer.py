# expect: params-not-in-optimizer
# The optimizer is built, then the model is re-created ("reset before training").
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_iris

torch.set_num_threads(1)
torch.manual_seed(0)


def build_model():
    return nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3))


iris = load_iris()
X = torch.tensor(iris.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(iris.target)

model = build_model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

# ... later, re-initialize the model for a fresh run
model = build_model()

for epoch in range(60):
    perm = torch.randperm(150)
    for i in range(0, 150, 30):
        idx = perm[i:i + 30]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
    if epoch % 10 == 0:
        print(epoch, loss.item())
