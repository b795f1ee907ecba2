# A classifier and its SGD optimizer are built inside the batch loop ("a clean model for each batch"): every
# batch trains a brand-new network for one step and throws it away.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
x = torch.randn(2000, 10)
y = (x[:, 0] * x[:, 1] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
for epoch in range(3):
    for xb, yb in loader:
        clf = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
        sgd = torch.optim.SGD(clf.parameters(), lr=0.1, momentum=0.9)
        sgd.zero_grad()
        loss = nn.CrossEntropyLoss()(clf(xb), yb)
        loss.backward()
        sgd.step()
    print(epoch, loss.item())
