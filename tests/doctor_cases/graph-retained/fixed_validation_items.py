# Wine classifier whose evaluation forgets torch.no_grad() but keeps only numbers: each batch's
# loss goes through .item() and its predictions through argmax, so every validation graph is
# dropped with the batch. Wasteful, not a leak: memory does not grow.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_wine
from torch import nn

torch.manual_seed(5)
wine = load_wine()
features = torch.tensor(wine.data, dtype=torch.float32)
features = (features - features.mean(0)) / features.std(0)
labels = torch.tensor(wine.target)
perm = torch.randperm(len(labels))
train_idx, val_idx = perm[:130], perm[130:]


class WineNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(13, 48), nn.ReLU(), nn.Linear(48, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


model = WineNet()
opt = torch.optim.RMSprop(model.parameters(), lr=2e-3)
for epoch in range(8):
    model.train()
    for chunk in train_idx[torch.randperm(len(train_idx))].split(10):
        opt.zero_grad()
        F.cross_entropy(model(features[chunk]), labels[chunk]).backward()
        opt.step()
    model.eval()
    total, right = 0.0, 0
    for chunk in val_idx.split(4):
        scores = model(features[chunk])
        total += F.cross_entropy(scores, labels[chunk], reduction="sum").item()
        right += (scores.argmax(dim=1) == labels[chunk]).sum().item()
    print(f"epoch {epoch}: val loss {total / len(val_idx):.3f} acc {right / len(val_idx):.2%}")
