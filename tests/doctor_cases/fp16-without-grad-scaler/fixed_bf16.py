"""bfloat16 autocast has float32's exponent range: no GradScaler is needed."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 20)
y = (x[:, :5].sum(dim=1) > 0).long()
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()

for epoch in range(3):
    for i in range(0, len(x), 64):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = criterion(model(x[i:i + 64]), y[i:i + 64])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
