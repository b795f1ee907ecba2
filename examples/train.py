"""A plain PyTorch training script (no trainwell inside) for `trainwell doctor run examples/train.py`.

It trains a small MLP on scikit-learn's 8x8 digits; `--epochs N` sets the epochs."""

import argparse

import torch
from sklearn.datasets import load_digits
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()

digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(args.epochs):
    model.train()
    for i in range(0, len(x), 64):
        optimizer.zero_grad()
        loss = loss_fn(model(x[i:i + 64]), y[i:i + 64])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch + 1}: loss {loss.item():.3f}")
