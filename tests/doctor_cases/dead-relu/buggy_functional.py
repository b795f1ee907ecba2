# The same dead network written with the functional API (F.relu inside forward, no nn.ReLU module):
# biases initialised at -5 leave almost every hidden unit at zero for every input.
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
        nn.init.constant_(self.fc1.bias, -5.0)
        nn.init.constant_(self.fc2.bias, -5.0)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = torch.relu(self.fc2(h))
        return self.fc3(h)


torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)
model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 64):
        idx = perm[i:i + 64]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
