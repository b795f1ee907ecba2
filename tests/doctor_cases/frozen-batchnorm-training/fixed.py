# Fine-tuning a new head on a frozen backbone: the backbone (with BatchNorm) is pretrained on digits 0-4 and
# frozen with requires_grad False and put back in eval mode after each model.train(), so its BatchNorm layers
# keep the pretrained statistics.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)

backbone = nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 32), nn.BatchNorm1d(32),
                         nn.ReLU())
pretrain_head = nn.Linear(32, 5)
pre = torch.optim.Adam([*backbone.parameters(), *pretrain_head.parameters()], lr=1e-2)
small = y < 5
for step in range(20):
    loss = F.cross_entropy(pretrain_head(backbone(x[small])), y[small])
    pre.zero_grad()
    loss.backward()
    pre.step()

for p in backbone.parameters():
    p.requires_grad_(False)
model = nn.Sequential(backbone, nn.Linear(32, 10))
opt = torch.optim.Adam(model[1].parameters(), lr=1e-2)
for epoch in range(4):
    model.train()
    backbone.eval()  # frozen: keep its BatchNorm statistics
    for idx in torch.randperm(1500).split(100):
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(x[1500:]).argmax(1) == y[1500:]).float().mean().item()
    print(f"epoch {epoch} loss {loss.item():.3f} acc {acc:.3f}")
