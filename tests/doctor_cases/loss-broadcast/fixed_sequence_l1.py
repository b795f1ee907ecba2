"""Next-value forecasting on noisy sine waves: a GRU reads 40 steps; its (B, 1) forecast is squeezed to the targets (B,)."""
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Waves(Dataset):
    def __init__(self, count: int, length: int = 40) -> None:
        g = torch.Generator().manual_seed(7)
        phase = torch.rand(count, 1, generator=g) * 2 * math.pi
        freq = 0.1 + 0.3 * torch.rand(count, 1, generator=g)
        t = torch.arange(length + 1, dtype=torch.float32)
        self.series = torch.sin(freq * t + phase) + 0.05 * torch.randn(count, length + 1, generator=g)

    def __len__(self) -> int:
        return len(self.series)

    def __getitem__(self, i: int):
        s = self.series[i]
        return s[:-1].unsqueeze(-1), s[-1]  # inputs (T, 1), the next value


class Forecaster(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(1, 24, batch_first=True)
        self.head = nn.Linear(24, 1)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.head(h[:, -1])  # (B, 1)


torch.manual_seed(3)
loader = DataLoader(Waves(256), batch_size=32, shuffle=True)
model = Forecaster()
opt = torch.optim.RMSprop(model.parameters(), lr=3e-3)
for epoch in range(3):
    total = 0.0
    for inputs, targets in loader:
        pred = model(inputs)
        loss = F.l1_loss(pred.squeeze(-1), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(epoch, round(total / len(loader), 4))
