"""float16 autocast with a GradScaler: unscale_ first, then clip, then step and update."""
import torch
from torch import nn
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)
device = "cpu"
x = torch.randn(512, 20)
y = (x[:, :5].sum(dim=1) > 0).long()
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device)

for epoch in range(3):
    for i in range(0, len(x), 64):
        optimizer.zero_grad()
        with torch.autocast(device_type=device, dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x[i:i + 64]), y[i:i + 64])
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
