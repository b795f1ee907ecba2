# The same Trainer on targets scaled to thousands of euros (mean 0, std about 1), with the gradients
# clipped before each step.
import torch
from torch import nn


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def step(self, x, y):
        self.opt.zero_grad()
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.clip()
        self.opt.step()
        return loss.item()

    def clip(self):
        nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=1.0)

    def fit(self, x, y, steps):
        return [self.step(x, y) for _ in range(steps)]


torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, :3].sum(1, keepdim=True) * 50000 + 250000)  # house prices in euros
y = (y - 250000) / 86600  # standardized
model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
history = Trainer(model, lr=0.05).fit(x, y, steps=10)
print(history)
