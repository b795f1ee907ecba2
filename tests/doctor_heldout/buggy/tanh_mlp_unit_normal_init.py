# expect: saturated-activations
# Weights initialised with nn.init.normal_(std=1.0) "as in the textbook" on a wide tanh MLP:
# pre-activations have std ~10, so almost every tanh unit sits at +-1.
import numpy as np
import torch
from torch import nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

torch.manual_seed(7)
np.random.seed(7)
torch.set_num_threads(1)

digits = load_digits()
X = digits.data.astype(np.float32) / 16.0
X = (X - X.mean(axis=0)) / (X.std(axis=0) + 1e-6)
Xtr, Xte, ytr, yte = train_test_split(X, digits.target, test_size=0.25, random_state=0, stratify=digits.target)
Xtr, Xte = torch.from_numpy(Xtr), torch.from_numpy(Xte)
ytr, yte = torch.from_numpy(ytr).long(), torch.from_numpy(yte).long()

net = nn.Sequential(
    nn.Linear(64, 256), nn.Tanh(),
    nn.Linear(256, 256), nn.Tanh(),
    nn.Linear(256, 10),
)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, mean=0.0, std=1.0)
        nn.init.zeros_(m.bias)


net.apply(init_weights)

opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

n = len(Xtr)
for epoch in range(12):
    perm = torch.randperm(n)
    total = 0.0
    for i in range(0, n, 64):
        idx = perm[i:i + 64]
        opt.zero_grad()
        loss = loss_fn(net(Xtr[idx]), ytr[idx])
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
    with torch.no_grad():
        acc = (net(Xte).argmax(1) == yte).float().mean().item()
    print(f"epoch {epoch:2d}  train loss {total / n:.4f}  test acc {acc:.3f}")
