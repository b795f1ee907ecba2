"""Mixed precision with float16 autocast, but the loss goes straight to backward(): no GradScaler."""
import torch
from torch import nn

torch.manual_seed(0)
device = "cpu"  # the same script on a GPU would say device = "cuda"
x = torch.randn(512, 20)
y = (x[:, :5].sum(dim=1) > 0).long()
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    for i in range(0, len(x), 64):
        xb, yb = x[i:i + 64].to(device), y[i:i + 64].to(device)
        optimizer.zero_grad()
        with torch.autocast(device_type=device, dtype=torch.float16):
            logits = model(xb)
            loss = nn.functional.cross_entropy(logits, yb)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
