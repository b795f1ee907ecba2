# expect: none
# The training arrays are sorted by class (they were concatenated class by class), but batches
# are drawn through a WeightedRandomSampler (class-balancing, with replacement), so every batch
# is a random mix of classes.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

torch.manual_seed(0)
np.random.seed(0)
torch.set_num_threads(1)

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
rng = np.random.default_rng(0)
test_mask = rng.random(len(y)) < 0.2
X_test, y_test = X[test_mask], y[test_mask]
X_train = np.concatenate([X[~test_mask & (y == 0)], X[~test_mask & (y == 1)]])
y_train = np.concatenate([y[~test_mask & (y == 0)], y[~test_mask & (y == 1)]])

class_count = np.bincount(y_train)
weights = torch.tensor(1.0 / class_count[y_train], dtype=torch.double)
sampler = WeightedRandomSampler(weights, num_samples=len(y_train), replacement=True)
loader = DataLoader(TensorDataset(torch.tensor(X_train, dtype=torch.float32),
                                  torch.tensor(y_train, dtype=torch.float32)),
                    batch_size=32, sampler=sampler)

net = nn.Sequential(nn.Linear(30, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters(), lr=2e-3)
lossf = nn.BCEWithLogitsLoss()
xt = torch.tensor(X_test, dtype=torch.float32)
for epoch in range(15):
    for xb, yb in loader:
        opt.zero_grad()
        loss = lossf(net(xb).squeeze(1), yb)
        loss.backward()
        opt.step()
    if epoch % 5 == 4:
        with torch.no_grad():
            acc = ((net(xt).squeeze(1) > 0).numpy() == y_test).mean()
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}  test acc {acc:.3f}")
