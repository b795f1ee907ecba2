# expect: grad-none
# forward() clips the encoder features with numpy ("np.clip is what we use in preprocessing"),
# which needs .detach().numpy(): the graph is cut there, so the encoder layers never get a gradient
# and only the classifier on top of random features trains.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits

torch.manual_seed(0)
torch.set_num_threads(1)


class ClippedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 16))
        self.classifier = nn.Sequential(nn.ReLU(), nn.Linear(16, 10))

    def forward(self, x):
        feats = self.encoder(x)
        feats = torch.from_numpy(np.clip(feats.detach().numpy(), -3.0, 3.0))
        return self.classifier(feats)


d = load_digits()
x_all = torch.tensor(d.data / 16.0, dtype=torch.float32)
y_all = torch.tensor(d.target)
x_tr, y_tr, x_te, y_te = x_all[:1300], y_all[:1300], x_all[1300:], y_all[1300:]

net = ClippedNet()
opt = torch.optim.Adam(net.parameters(), lr=2e-3)
for epoch in range(8):
    perm = torch.randperm(len(x_tr))
    for i in range(0, len(perm), 32):
        b = perm[i:i + 32]
        loss = F.cross_entropy(net(x_tr[b]), y_tr[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = (net(x_te).argmax(1) == y_te).float().mean().item()
    print(f"epoch {epoch}: loss {loss.item():.3f}  test acc {acc:.3f}")
