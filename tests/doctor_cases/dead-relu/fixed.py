# The classifier with the default (small, centred) bias initialisation; one ReLU module is reused for
# both layers and dropout is applied after it.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 10)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return self.fc3(self.drop(self.act(self.fc2(self.drop(self.act(self.fc1(x)))))))


torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)
model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    model.train()
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 64):
        idx = perm[i:i + 64]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
