# expect: nonfinite-loss
# Binary cross-entropy written by hand as -(y*log(p) + (1-y)*log(1-p)) on p = sigmoid(logit).
# Once a confident (wrong) prediction rounds p to exactly 1.0 in float32, log(1-p) = -inf and the
# loss turns inf, then NaN gradients poison the weights.
import torch
import torch.nn as nn
from sklearn.datasets import make_classification

torch.manual_seed(0)
torch.set_num_threads(1)

# 10% label noise: some points will always be confidently "wrong"
X, y = make_classification(n_samples=1000, n_features=12, n_informative=6, flip_y=0.1, class_sep=2.5,
                           random_state=9)
X = torch.tensor(X, dtype=torch.float32)
y = torch.tensor(y, dtype=torch.float32)


def bce(p, t):
    return -(t * torch.log(p) + (1 - t) * torch.log(1 - p)).mean()


net = nn.Sequential(nn.Linear(12, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)

for it in range(400):
    idx = torch.randint(0, len(X), (100,))
    p = torch.sigmoid(net(X[idx]).squeeze(1))
    loss = bce(p, y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 50 == 0 or it == 399:
        with torch.no_grad():
            acc = ((net(X).squeeze(1) > 0).float() == y).float().mean().item()
        print(f"iter {it}: loss {loss.item():.4f}  acc {acc:.3f}")
