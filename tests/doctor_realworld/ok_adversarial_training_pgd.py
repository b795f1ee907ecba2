# expect: none
# Adversarial training: a fresh perturbation tensor that requires grad is made for every batch (on purpose).
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(256, 10)
y = (X[:, 0] + X[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
eps, alpha = 0.1, 0.03
for epoch in range(4):
    for i in range(0, 256, 32):
        xb, yb = X[i:i + 32], y[i:i + 32]
        delta = torch.zeros_like(xb, requires_grad=True)
        for _ in range(3):
            attack = nn.functional.cross_entropy(model(xb + delta), yb)
            grad, = torch.autograd.grad(attack, delta)
            delta = (delta + alpha * grad.sign()).clamp(-eps, eps).detach().requires_grad_(True)
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb + delta.detach()), yb).backward()
        opt.step()
