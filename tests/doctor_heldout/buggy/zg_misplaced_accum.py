# expect: zero-grad-misplaced
# Gradient accumulation written wrong: zero_grad() before step() inside the "every 4" branch.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)

X = torch.randn(1024, 16)
y = (X[:, 0] + X[:, 1] > 0).long()
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(16, 32)
        self.l2 = nn.Linear(32, 2)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
accum = 4
for epoch in range(3):
    for step, (xb, yb) in enumerate(loader):
        loss = F.cross_entropy(model(xb), yb) / accum
        loss.backward()
        if (step + 1) % accum == 0:
            optimizer.zero_grad()
            optimizer.step()
    print("epoch", epoch, loss.item() * accum)
