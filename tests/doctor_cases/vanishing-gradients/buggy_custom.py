# A custom deep network that applies torch.sigmoid between 12 hidden layers, with a custom Dataset,
# a DataLoader and Adam. The gradient reaching the first layers is ~1e-9 of the last layer's.
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Spirals(Dataset):
    def __init__(self, n=1024):
        g = torch.Generator().manual_seed(0)
        t = torch.rand(n, generator=g) * 4 * 3.1416
        self.y = torch.randint(0, 2, (n,), generator=g)
        sign = self.y.float() * 2 - 1
        self.x = torch.stack([t.cos() * t * sign, t.sin() * t * sign], 1) / 6 + 0.05 * torch.randn(n, 2, generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class DeepNet(nn.Module):
    def __init__(self, width=48, depth=12):
        super().__init__()
        self.inp = nn.Linear(2, width)
        self.hidden = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.out = nn.Linear(width, 2)

    def forward(self, x):
        h = torch.sigmoid(self.inp(x))
        for layer in self.hidden:
            h = torch.sigmoid(layer(h))
        return self.out(h)


torch.manual_seed(0)
model = DeepNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(Spirals(), batch_size=64, shuffle=True)

for epoch in range(2):
    for xb, yb in loader:
        model.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
