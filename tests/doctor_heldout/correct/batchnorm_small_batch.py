# expect: none
# BatchNorm1d with batch size 4 (drop_last so no batch of 1), eval for the test metric.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_iris

torch.set_num_threads(1)
torch.manual_seed(0)

iris = load_iris()
X = torch.tensor(iris.data, dtype=torch.float32)
y = torch.tensor(iris.target)
loader = DataLoader(TensorDataset(X, y), batch_size=4, shuffle=True, drop_last=True)

model = nn.Sequential(nn.BatchNorm1d(4), nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
for epoch in range(5):
    model.train()
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(1) == y).float().mean().item()
    print(epoch, acc)
