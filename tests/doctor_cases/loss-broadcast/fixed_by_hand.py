"""A small regressor that trains itself, with its error written out by hand (mean absolute error).

Fuel use from engine size, weight and speed; the model's output column is squeezed to the
targets' flat vector before the subtraction.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Trips(Dataset):
    def __init__(self, n: int = 1500) -> None:
        g = torch.Generator().manual_seed(2)
        self.x = torch.rand(n, 3, generator=g) * torch.tensor([3.0, 2.0, 1.2])
        self.y = 1.5 * self.x[:, 0] + 0.8 * self.x[:, 1] * self.x[:, 2] + 0.05 * torch.randn(n, generator=g)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class FuelModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 48), nn.SiLU(), nn.Linear(48, 1))
        self.opt = torch.optim.AdamW(self.parameters(), lr=2e-3)

    def forward(self, x):
        return self.body(x)

    def fit_epoch(self, loader) -> float:
        worst = 0.0
        for x, y in loader:
            err = torch.abs(self(x).squeeze(1) - y).sum() / len(y)
            self.opt.zero_grad()
            err.backward()
            self.opt.step()
            worst = max(worst, err.item())
        return worst


torch.manual_seed(4)
m = FuelModel()
for epoch in range(3):
    print("epoch", epoch, "max batch MAE", round(m.fit_epoch(DataLoader(Trips(), batch_size=50, shuffle=True)), 3))
