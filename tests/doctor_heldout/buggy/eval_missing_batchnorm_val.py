# expect: eval-mode-missing
# Validation inside the epoch loop under no_grad, BatchNorm model, model.eval() forgotten.
import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.manual_seed(0)

X = torch.randn(1200, 12)
y = (X[:, :3].sum(1) > 0).long()
Xtr, ytr, Xva, yva = X[:1000], y[:1000], X[1000:], y[1000:]

model = nn.Sequential(
    nn.Linear(12, 64), nn.BatchNorm1d(64), nn.ReLU(),
    nn.Linear(64, 2),
)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(5):
    for i in range(0, 1000, 50):
        optimizer.zero_grad()
        loss = criterion(model(Xtr[i:i + 50]), ytr[i:i + 50])
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        val_loss = criterion(model(Xva), yva).item()
        acc = (model(Xva).argmax(1) == yva).float().mean().item()
    print(f"epoch {epoch} val_loss {val_loss:.3f} acc {acc:.3f}")
