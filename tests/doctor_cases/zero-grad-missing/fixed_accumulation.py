# Intended gradient accumulation: 4 micro-batches per step, cleared after every step,
# with gradient clipping and clearing by setting .grad to None.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(512, 20)
y = (x[:, :2].sum(1) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
accumulate = 4

for epoch in range(3):
    for i, (xb, yb) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(xb), yb) / accumulate
        loss.backward()
        if (i + 1) % accumulate == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            for p in model.parameters():
                p.grad = None
