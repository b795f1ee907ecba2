# expect: nonfinite-input
# Per-feature standardisation (x - mean) / std on the 8x8 digits: several border pixels are 0 in
# every training image, so their std is 0 and those columns become 0/0 = NaN for every sample.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.manual_seed(0)
np.random.seed(0)
torch.set_num_threads(1)

digits = load_digits()
images = torch.tensor(digits.data, dtype=torch.float32)
labels = torch.tensor(digits.target)
perm = torch.randperm(len(images))
train_idx, test_idx = perm[:1400], perm[1400:]

mean = images[train_idx].mean(dim=0)
std = images[train_idx].std(dim=0)
norm = (images - mean) / std

train_dl = DataLoader(TensorDataset(norm[train_idx], labels[train_idx]), batch_size=32, shuffle=True)

net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for epoch in range(5):
    net.train()
    for xb, yb in train_dl:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(xb), yb)
        loss.backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        acc = (net(norm[test_idx]).argmax(1) == labels[test_idx]).float().mean().item()
    print(f"epoch {epoch}: last loss {loss.item():.4f}  test acc {acc:.3f}")
