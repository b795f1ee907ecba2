# Inputs and labels are shuffled with two different permutations, so every batch pairs digits with
# random labels: the model can only learn the class frequencies and the loss stays near ln(10).
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(4):
    x_order = torch.randperm(len(x))
    y_order = torch.randperm(len(y))
    for i in range(0, len(x), 64):
        xb, yb = x[x_order[i:i + 64]], y[y_order[i:i + 64]]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
