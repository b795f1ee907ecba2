# Breast-cancer features, split once. Each epoch the validation set is gone through twice in a row,
# once for the loss and once for the accuracy, so every validation row is evaluated twice in one
# round: repeats inside the validation data, none shared with the training data.
import torch
from sklearn.datasets import load_breast_cancer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(17)
data = load_breast_cancer()
x = torch.tensor(data.data, dtype=torch.float32)
x = (x - x.mean(0)) / x.std(0)
y = torch.tensor(data.target)
order = torch.randperm(len(y))
train = TensorDataset(x[order[:450]], y[order[:450]])
valid = TensorDataset(x[order[450:]], y[order[450:]])

clf = nn.Sequential(nn.Linear(30, 32), nn.SiLU(), nn.Linear(32, 2))
opt = torch.optim.Adam(clf.parameters(), lr=1e-3)
for epoch in range(6):
    clf.train()
    for xb, yb in DataLoader(train, batch_size=25, shuffle=True):
        opt.zero_grad()
        nn.functional.cross_entropy(clf(xb), yb).backward()
        opt.step()
    clf.eval()
    with torch.no_grad():
        loss = sum(nn.functional.cross_entropy(clf(xb), yb, reduction="sum").item()
                   for xb, yb in DataLoader(valid, batch_size=40))
        right = sum((clf(xb).argmax(1) == yb).sum().item() for xb, yb in DataLoader(valid, batch_size=40))
    print(f"epoch {epoch}: val loss {loss / len(valid):.3f}, val acc {right / len(valid):.3f}")
