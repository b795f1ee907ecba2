# expect: zero-grad-misplaced
# zero_grad() between backward() and step(): every step uses zero gradients.
import torch
import torch.nn as nn
from sklearn.datasets import load_iris

torch.set_num_threads(1)
torch.manual_seed(0)

iris = load_iris()
X = torch.tensor(iris.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(iris.target)

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(100):
    perm = torch.randperm(len(X))
    for i in range(0, len(X), 30):
        idx = perm[i:i + 30]
        loss = criterion(model(X[idx]), y[idx])
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
    if epoch % 20 == 0:
        print(epoch, loss.item())
