"""One GradScaler for the whole run, updated after every step (two optimizers share it)."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 20)
y = (x[:, :5].sum(dim=1) > 0).long()
encoder = nn.Sequential(nn.Linear(20, 64), nn.ReLU())
head = nn.Linear(64, 2)
opt_encoder = torch.optim.SGD(encoder.parameters(), lr=0.1, momentum=0.9)
opt_head = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)
scaler = torch.amp.GradScaler("cpu")

for epoch in range(3):
    for i in range(0, len(x), 64):
        opt_encoder.zero_grad()
        opt_head.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = nn.functional.cross_entropy(head(encoder(x[i:i + 64])), y[i:i + 64])
        scaler.scale(loss).backward()
        scaler.step(opt_encoder)
        scaler.step(opt_head)
        scaler.update()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
