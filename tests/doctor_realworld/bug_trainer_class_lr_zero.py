# expect: params-not-updating
# A model that trains itself; the learning rate is read from a config dict with the wrong key (defaults to 0).
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 2))
        self.optimizer = torch.optim.SGD(self.parameters(), lr=config.get("lr", 0.0), momentum=0.9)
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, x):
        return self.net(x)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = self.loss_fn(self(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, x, y, epochs):
        return [self.train_step(x, y) for _ in range(epochs)]


torch.manual_seed(0)
X = torch.randn(128, 12)
Y = (X[:, 0] * X[:, 1] > 0).long()
clf = Classifier({"learning_rate": 0.05})
history = clf.fit(X, Y, epochs=10)
print(history[0], history[-1])
