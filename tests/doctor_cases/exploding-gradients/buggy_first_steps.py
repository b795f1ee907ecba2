# A Trainer class with its own fit / step methods: a ReLU regressor on targets in the hundreds of
# thousands, plain SGD, no clipping. The first updates blow the weights up: the loss is inf by step 3.
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
        pass

    def fit(self, x, y, steps):
        return [self.step(x, y) for _ in range(steps)]


torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, :3].sum(1, keepdim=True) * 50000 + 250000)  # house prices in euros
model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
history = Trainer(model, lr=0.2).fit(x, y, steps=10)
print(history)
