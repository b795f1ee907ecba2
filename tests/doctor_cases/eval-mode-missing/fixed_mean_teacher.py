# Mean teacher on digits: an EMA copy of the student (no optimizer owns it) gives consistency
# targets under torch.no_grad() in training mode, on purpose (its dropout is part of the method);
# the student itself is validated with model.eval() / model.train().
import copy

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)
loader = DataLoader(TensorDataset(x[:1400], y[:1400]), batch_size=64, shuffle=True)
x_val, y_val = x[1400:], y[1400:]

student = nn.Sequential(nn.Linear(64, 96), nn.BatchNorm1d(96), nn.ReLU(), nn.Dropout(0.2), nn.Linear(96, 10))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
opt = torch.optim.Adam(student.parameters(), lr=1e-3)

for epoch in range(3):
    student.train()
    for xb, yb in loader:
        noisy = xb + 0.05 * torch.randn_like(xb)
        logits = student(xb)
        with torch.no_grad():
            target = teacher(noisy).softmax(1)
        loss = F.cross_entropy(logits, yb) + F.mse_loss(logits.softmax(1), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for t, s in zip(teacher.parameters(), student.parameters()):
                t.mul_(0.99).add_(s, alpha=0.01)
    student.eval()
    with torch.no_grad():
        acc = (student(x_val).argmax(1) == y_val).float().mean().item()
    print(f"epoch {epoch} loss {loss.item():.3f} val acc {acc:.3f}")
