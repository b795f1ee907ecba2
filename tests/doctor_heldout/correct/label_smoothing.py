# expect: none
# CrossEntropyLoss(label_smoothing=0.1) on iris.
import torch
import torch.nn as nn
from sklearn.datasets import load_iris

torch.set_num_threads(1)
torch.manual_seed(0)

iris = load_iris()
X = torch.tensor(iris.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(iris.target)
model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3))
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(60):
    perm = torch.randperm(150)
    for i in range(0, 150, 25):
        idx = perm[i:i + 25]
        optimizer.zero_grad()
        loss = criterion(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
print(loss.item())
