# A custom Dataset and a small classifier; Adam gets lr=1e-9, so nothing is learned in 3 epochs.
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Rings(Dataset):
    def __init__(self, n=1200):
        g = torch.Generator().manual_seed(1)
        radius = torch.rand(n, generator=g) * 3
        angle = torch.rand(n, generator=g) * 6.2832
        self.x = torch.stack([radius * angle.cos(), radius * angle.sin()], 1) + 0.05 * torch.randn(n, 2, generator=g)
        self.y = radius.long().clamp(max=2)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.head = nn.Linear(64, 3)

    def forward(self, x):
        return self.head(self.body(x))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-9)
loader = DataLoader(Rings(), batch_size=32, shuffle=True)

for epoch in range(3):
    for xb, yb in loader:
        for p in model.parameters():
            p.grad = None
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
