# Regression with a custom Dataset: predictions are collected for an epoch-level metric
# without detaching them, so every batch's graph stays alive.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class Curve(Dataset):
    def __init__(self, n: int = 2048) -> None:
        self.x = torch.rand(n, 4) * 4 - 2
        self.y = (self.x ** 2).sum(1, keepdim=True)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int):
        return self.x[i], self.y[i]


model = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 1))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
mse = nn.MSELoss()
loader = DataLoader(Curve(), batch_size=64, shuffle=True)

for epoch in range(2):
    preds, targets = [], []
    for xb, yb in loader:
        model.zero_grad()
        out = model(xb)
        loss = mse(out, yb)
        loss.backward()
        opt.step()
        preds.append(out)  # bug: should be out.detach()
        targets.append(yb)
    r2 = 1 - ((torch.cat(preds) - torch.cat(targets)) ** 2).mean() / torch.cat(targets).var()
    print(f"epoch {epoch} r2 {r2.item():.3f}")
