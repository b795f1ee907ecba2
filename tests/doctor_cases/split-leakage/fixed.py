# Handwritten digits split 80 / 20 with one random permutation.
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
digits = load_digits()
images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
labels = torch.tensor(digits.target)
n = len(labels)
cut = int(0.8 * n)
perm = torch.randperm(n)
train_idx, val_idx = perm[:cut], perm[cut:]
train_loader = DataLoader(TensorDataset(images[train_idx], labels[train_idx]), batch_size=64, shuffle=True)
val_loader = DataLoader(TensorDataset(images[val_idx], labels[val_idx]), batch_size=128)

model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(16 * 4 * 4, 10))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(3):
    model.train()
    for xb, yb in train_loader:
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in val_loader:
            correct += (model(xb).argmax(1) == yb).sum().item()
    print(f"epoch {epoch}: val accuracy {correct / len(val_idx):.3f}")
