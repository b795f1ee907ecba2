# The same classifier with Adam at lr=1e-3 and a linear warm-up; the body is then frozen and only the
# head keeps training (frozen weights get no gradient and must not look like a too-low learning rate).
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
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.01, total_iters=20)
loader = DataLoader(Rings(), batch_size=32, shuffle=True)

for epoch in range(3):
    if epoch == 2:
        model.body.requires_grad_(False)
    for xb, yb in loader:
        for p in model.parameters():
            p.grad = None
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        warmup.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
