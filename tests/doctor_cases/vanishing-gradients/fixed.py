# The 10-layer MLP with BatchNorm and ReLU in every block: gradients reach the first layers.
import torch
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)

layers = [nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU()]
for _ in range(9):
    layers += [nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU()]
model = nn.Sequential(*layers, nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

for epoch in range(2):
    model.train()
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 64):
        idx = perm[i:i + 64]
        optimizer.zero_grad()
        loss = criterion(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean()
    print(f"epoch {epoch}: loss {loss.item():.3f} accuracy {acc:.2f}")
