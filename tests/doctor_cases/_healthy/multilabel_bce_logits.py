# Multi-label classification: BCEWithLogitsLoss on raw logits with 0/1 targets, pos_weight,
# and a model that returns logits; probabilities computed with sigmoid only for metrics.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(1000, 12)
w = torch.randn(12, 5)
y = ((x @ w) > 0.5).float()
model = nn.Sequential(nn.Linear(12, 48), nn.SiLU(), nn.Linear(48, 5))
loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.full((5,), 1.5))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(5):
    for i in range(0, 1000, 50):
        logits = model(x[i:i + 50])
        loss = loss_fn(logits, y[i:i + 50])
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = ((torch.sigmoid(model(x)) > 0.5).float() == y).float().mean().item()
print(f"label accuracy {acc:.3f}")
