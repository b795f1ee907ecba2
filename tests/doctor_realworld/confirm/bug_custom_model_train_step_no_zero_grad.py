# expect: zero-grad-missing
# source: https://github.com/fchollet/deep-learning-with-python-notebooks/issues/293
# A "custom model" whose train_step() runs forward, loss.backward() and optimizer.step() but never zero_grad(), so each step uses every earlier step's gradients too.
import torch
from torch import nn

torch.manual_seed(0)


class CustomModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(28 * 28, 512), nn.ReLU(), nn.Linear(512, 10))
        self.loss_fn = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.RMSprop(self.parameters(), lr=1e-3)

    def forward(self, x):
        return self.net(x)

    def train_step(self, data):
        inputs, targets = data
        predictions = self(inputs)
        loss = self.loss_fn(predictions, targets)
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item(), "acc": (predictions.argmax(1) == targets).float().mean().item()}

    def fit(self, x, y, epochs, batch_size=128):
        for epoch in range(epochs):
            perm = torch.randperm(len(x))
            for i in range(0, len(x), batch_size):
                idx = perm[i:i + batch_size]
                logs = self.train_step((x[idx], y[idx]))
            print(epoch, logs)


prototypes = torch.rand(10, 28 * 28)
y = torch.randint(0, 10, (3000,))
x = (prototypes[y] + 0.5 * torch.rand(3000, 28 * 28)).clamp(0, 1)
CustomModel().fit(x, y, epochs=3)
