# expect: wrong-loss-for-task
# 3-class iris with a single output unit and BCEWithLogitsLoss against labels 0/1/2 cast to float.
import torch
import torch.nn as nn
from sklearn.datasets import load_iris

torch.set_num_threads(1)
torch.manual_seed(0)

iris = load_iris()
X = torch.tensor(iris.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(iris.target, dtype=torch.float32).unsqueeze(1)

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(30):
    perm = torch.randperm(150)
    for i in range(0, 150, 15):
        idx = perm[i:i + 15]
        optimizer.zero_grad()
        loss = criterion(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
print(loss.item())
