"""float16 autocast with a GradScaler: the loss is scaled before backward() and unscaled by scaler.step()."""
import torch
from torch import nn

torch.manual_seed(0)
device = "cpu"
x = torch.randn(512, 20)
y = (x[:, :5].sum(dim=1) > 0).long()
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler(device)

for epoch in range(3):
    for i in range(0, len(x), 64):
        xb, yb = x[i:i + 64].to(device), y[i:i + 64].to(device)
        optimizer.zero_grad()
        with torch.autocast(device_type=device, dtype=torch.float16):
            logits = model(xb)
            loss = nn.functional.cross_entropy(logits, yb)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
