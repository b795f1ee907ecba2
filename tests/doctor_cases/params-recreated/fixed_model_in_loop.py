# A classifier and its SGD optimizer built once, before the batch loop, and trained on every batch.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
x = torch.randn(2000, 10)
y = (x[:, 0] * x[:, 1] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
clf = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
sgd = torch.optim.SGD(clf.parameters(), lr=0.1, momentum=0.9)
for epoch in range(3):
    for xb, yb in loader:
        sgd.zero_grad()
        loss = nn.CrossEntropyLoss()(clf(xb), yb)
        loss.backward()
        sgd.step()
    print(epoch, loss.item())
