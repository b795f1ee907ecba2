# Fraud detection on a table sorted by label, with a fresh random order of rows every epoch.
import torch
import torch.nn.functional as F
from torch import nn

g = torch.Generator().manual_seed(3)
n = 3000
features = torch.randn(n, 12, generator=g)
is_fraud = (features[:, 0] + 0.5 * features[:, 3] > 1.0).float()
order = torch.argsort(is_fraud, stable=True)  # "group the fraud cases together" while exploring the data
features, is_fraud = features[order], is_fraud[order]

net = nn.Sequential(nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
batch = 100
for epoch in range(4):
    perm = torch.randperm(n, generator=g)
    for start in range(0, n, batch):
        idx = perm[start:start + batch]
        xb, yb = features[idx], is_fraud[idx]
        logits = net(xb).squeeze(1)
        loss = F.binary_cross_entropy_with_logits(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
