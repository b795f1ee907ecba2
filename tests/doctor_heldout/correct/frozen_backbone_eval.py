# expect: none
# "Pretrained" backbone with BatchNorm frozen and kept in eval mode; only the head trains.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
X = torch.tensor(d.data / 16.0, dtype=torch.float32)
y = torch.tensor(d.target)

backbone = nn.Sequential(nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(),
                         nn.Linear(128, 64), nn.BatchNorm1d(64), nn.ReLU())
# pretend-pretrain the backbone quickly
pre_head = nn.Linear(64, 10)
pre_opt = torch.optim.Adam(list(backbone.parameters()) + list(pre_head.parameters()), lr=1e-3)
for i in range(0, 800, 50):
    pre_opt.zero_grad()
    F.cross_entropy(pre_head(backbone(X[i:i + 50])), y[i:i + 50]).backward()
    pre_opt.step()

for p in backbone.parameters():
    p.requires_grad = False
backbone.eval()
head = nn.Linear(64, 10)
opt = torch.optim.Adam(head.parameters(), lr=1e-2)

for epoch in range(4):
    head.train()
    for i in range(800, len(X), 32):
        with torch.no_grad():
            feats = backbone(X[i:i + 32])
        opt.zero_grad()
        loss = F.cross_entropy(head(feats), y[i:i + 32])
        loss.backward()
        opt.step()
    print(epoch, loss.item())
