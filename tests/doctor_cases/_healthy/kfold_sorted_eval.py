# 4-fold cross-validation on the wine data: a fresh model per fold, shuffled training batches, and each fold's
# held-out rows evaluated in label order (sorting the evaluation data is harmless). The training accuracy of
# each fold is printed too, computed on that fold's training rows.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_wine
from torch import nn

torch.manual_seed(0)
X, y = load_wine(return_X_y=True)
X = torch.tensor((X - X.mean(0)) / X.std(0), dtype=torch.float32)
y = torch.tensor(y)
folds = torch.randperm(len(y)).chunk(4)
scores = []
for k, held_out in enumerate(folds):
    train_rows = torch.cat([f for j, f in enumerate(folds) if j != k])
    held_out = held_out[torch.argsort(y[held_out], stable=True)]
    model = nn.Sequential(nn.Linear(13, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=1e-4)
    for epoch in range(15):
        for rows in train_rows[torch.randperm(len(train_rows))].split(16):
            opt.zero_grad()
            F.cross_entropy(model(X[rows]), y[rows]).backward()
            opt.step()
        with torch.no_grad():
            val_loss = sum(F.cross_entropy(model(X[rows]), y[rows], reduction="sum").item()
                           for rows in held_out.split(16)) / len(held_out)
    with torch.no_grad():
        train_acc = (model(X[train_rows]).argmax(1) == y[train_rows]).float().mean().item()
        val_acc = (model(X[held_out]).argmax(1) == y[held_out]).float().mean().item()
    scores.append(val_acc)
    print(f"fold {k}: train accuracy {train_acc:.3f}, held-out accuracy {val_acc:.3f}, loss {val_loss:.3f}")
print("mean held-out accuracy", sum(scores) / len(scores))
