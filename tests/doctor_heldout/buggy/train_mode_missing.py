# expect: train-mode-missing
# model.eval() in the validation function, but model.train() is never called again.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.bn = nn.BatchNorm1d(64)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(64, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.bn(self.fc1(x)))))


def validate(model, loader):
    model.eval()
    tot, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            tot += F.cross_entropy(model(x), y, reduction="sum").item()
            n += len(y)
    return tot / n


X = torch.randn(1500, 20)
y = torch.randint(0, 3, (1500,))
y = torch.where(X[:, 0] > 0.5, 0, torch.where(X[:, 1] > 0, 1, 2))
train_loader = DataLoader(TensorDataset(X[:1200], y[:1200]), batch_size=32, shuffle=True)
val_loader = DataLoader(TensorDataset(X[1200:], y[1200:]), batch_size=100)

model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model.train()
for epoch in range(4):
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(epoch, "val", validate(model, val_loader))
