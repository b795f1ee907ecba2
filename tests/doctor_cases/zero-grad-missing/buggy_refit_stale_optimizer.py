# Pick the width on a validation split, then refit a fresh network on all the wine data.
# The refit loop clears the gradients through the optimizer of the model it replaced.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_wine
from torch import nn

torch.manual_seed(3)
wine = load_wine()
features = torch.tensor(wine.data, dtype=torch.float32)
features = (features - features.mean(0)) / features.std(0)
labels = torch.tensor(wine.target)
order = torch.randperm(len(labels))
fit_idx, check_idx = order[:140], order[140:]


def network(width: int) -> nn.Module:
    return nn.Sequential(nn.Linear(13, width), nn.Tanh(), nn.Linear(width, 3))


def batches(idx: torch.Tensor, size: int = 16):
    shuffled = idx[torch.randperm(len(idx))]
    for start in range(0, len(shuffled), size):
        part = shuffled[start:start + size]
        yield features[part], labels[part]


scores = {}
for width in (8, 32):
    net = network(width)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(15):
        for xb, yb in batches(fit_idx):
            optimizer.zero_grad()
            F.cross_entropy(net(xb), yb).backward()
            optimizer.step()
    with torch.no_grad():
        scores[width] = (net(features[check_idx]).argmax(1) == labels[check_idx]).float().mean().item()
best = max(scores, key=scores.get)
print("validation accuracy by width:", scores, "-> refit with", best)

final = network(best)
final_optimizer = torch.optim.SGD(final.parameters(), lr=0.05, momentum=0.9)
for epoch in range(15):
    for xb, yb in batches(order):
        optimizer.zero_grad()  # the earlier model's optimizer: final's gradients keep adding up
        loss = F.cross_entropy(final(xb), yb)
        loss.backward()
        final_optimizer.step()
    if epoch % 5 == 4:
        print(f"refit epoch {epoch + 1}: loss {loss.item():.3f}")
