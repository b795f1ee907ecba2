# expect: none
# A model with its own optimizer, train_step and evaluate methods, and extra attributes.
import torch
from torch import nn


class AutoModel(nn.Module):
    def __init__(self, lr=1e-2):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)
        self.history = []
        self.best = float("inf")

    def forward(self, x):
        return self.layers(x)

    def train_step(self, x, y):
        self.train()
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self(x), y)
        loss.backward()
        self.optimizer.step()
        self.history.append(loss.item())
        self.best = min(self.best, self.history[-1])

    @torch.no_grad()
    def evaluate(self, x, y):
        self.eval()
        return (self(x).argmax(1) == y).float().mean().item()


torch.manual_seed(0)
X = torch.randn(300, 10)
Y = X[:, :3].argmax(1)
m = AutoModel()
for epoch in range(30):
    for i in range(0, 300, 60):
        m.train_step(X[i:i + 60], Y[i:i + 60])
print(m.evaluate(X, Y))
