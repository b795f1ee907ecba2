# A regression Dataset class over a whole table, one DataLoader to train on it; "evaluation" goes through the
# first two batches of a second loader over the same Dataset, so every row scored was trained on.
import math

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Curves(Dataset):
    def __init__(self, n: int) -> None:
        g = torch.Generator().manual_seed(11)
        self.t = torch.rand(n, 3, generator=g) * 2 - 1
        self.y = torch.sin(math.pi * self.t[:, :1]) + self.t[:, 1:2] * self.t[:, 2:3]

    def __len__(self) -> int:
        return len(self.t)

    def __getitem__(self, i):
        return self.t[i], self.y[i]


torch.manual_seed(11)
data = Curves(2000)
train_loader = DataLoader(data, batch_size=50, shuffle=True)
score_loader = DataLoader(data, batch_size=100)
model = nn.Sequential(nn.Linear(3, 48), nn.Tanh(), nn.Linear(48, 48), nn.Tanh(), nn.Linear(48, 1))
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for epoch in range(4):
    for t, y in train_loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(t), y).backward()
        opt.step()
    model.eval()
    errors = []
    with torch.no_grad():
        for k, (t, y) in enumerate(score_loader):
            if k == 2:
                break
            errors.append((model(t) - y).abs().mean())
    model.train()
    print(f"epoch {epoch}: mean abs error {torch.stack(errors).mean():.4f}")
