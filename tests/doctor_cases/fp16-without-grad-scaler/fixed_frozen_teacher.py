"""Distillation: a frozen teacher runs in float16 autocast for speed; the student trains in float32 (no scaler)."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 20)
teacher = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4)).eval()
teacher.requires_grad_(False)
student = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)

for epoch in range(3):
    for i in range(0, len(x), 64):
        xb = x[i:i + 64]
        with torch.autocast("cpu", dtype=torch.float16):
            soft = teacher(xb).float().softmax(dim=1)
        loss = F.kl_div(student(xb).log_softmax(dim=1), soft, reduction="batchmean")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
