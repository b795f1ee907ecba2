# expect: none
# A custom training_step that clears gradients with model.zero_grad().
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_iris

torch.set_num_threads(1)
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def training_step(model, optimizer, xb, yb):
    model.zero_grad()
    loss = F.cross_entropy(model(xb), yb)
    loss.backward()
    optimizer.step()
    return loss.item()


iris = load_iris()
X = torch.tensor(iris.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(iris.target)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(50):
    perm = torch.randperm(150)
    for i in range(0, 150, 16):
        idx = perm[i:i + 16]
        l = training_step(model, optimizer, X[idx], y[idx])
print(l)
