# Prototype classification: squared distances from every embedding to every class prototype, taken with
# F.mse_loss(reduction='none') on purpose, (B, 1, D) against (1, C, D); the loss is cross-entropy on them.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_wine
from torch import nn

torch.manual_seed(6)
wine = load_wine()
x = torch.tensor(wine.data, dtype=torch.float32)
x = (x - x.mean(0)) / x.std(0)
y = torch.tensor(wine.target)

embed = nn.Sequential(nn.Linear(13, 32), nn.ReLU(), nn.Linear(32, 8))
prototypes = nn.Parameter(torch.randn(3, 8))
opt = torch.optim.Adam([*embed.parameters(), prototypes], lr=5e-3)
for epoch in range(60):
    perm = torch.randperm(len(y))
    for i in range(0, len(y), 32):
        idx = perm[i:i + 32]
        z = embed(x[idx])
        dist = F.mse_loss(z[:, None, :], prototypes[None, :, :], reduction="none").sum(-1)  # (B, C)
        loss = F.cross_entropy(-dist, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
print("loss", round(loss.item(), 4))
