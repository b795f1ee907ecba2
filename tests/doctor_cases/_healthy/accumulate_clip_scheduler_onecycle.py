# Gradient accumulation over 2 micro-batches, clipping by value, a OneCycle schedule stepped
# per optimizer step, and .zero_grad() on the model rather than the optimizer.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(1024, 16)
y = (x[:, :4].sum(1) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, drop_last=True)
model = nn.Sequential(nn.Linear(16, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 2))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
epochs, accum = 4, 2
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=epochs * len(loader) // accum)
for epoch in range(epochs):
    model.train()
    for i, (xb, yb) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(xb), yb) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            nn.utils.clip_grad_value_(model.parameters(), 0.5)
            opt.step()
            sched.step()
            model.zero_grad()
print(f"loss {loss.item() * accum:.3f}")
