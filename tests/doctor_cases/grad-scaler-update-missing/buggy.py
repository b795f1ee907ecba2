"""float16 autocast with a GradScaler whose update() is forgotten: PyTorch stops at the second step."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 20)
y = (x[:, :5].sum(dim=1) > 0).long()
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scaler = torch.amp.GradScaler("cpu")

for epoch in range(3):
    for i in range(0, len(x), 64):
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x[i:i + 64]), y[i:i + 64])
        scaler.scale(loss).backward()
        scaler.step(optimizer)
    print(f"epoch {epoch}: loss {loss.item():.3f}")
