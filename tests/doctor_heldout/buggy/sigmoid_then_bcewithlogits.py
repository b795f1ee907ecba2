# expect: sigmoid-before-bce-with-logits
# Binary classifier whose forward ends in torch.sigmoid, trained with BCEWithLogitsLoss.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_breast_cancer

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_breast_cancer()
X = torch.tensor(d.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(d.target, dtype=torch.float32).unsqueeze(1)


class BinaryNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(30, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc2(F.relu(self.fc1(x))))


model = BinaryNet()
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(20):
    for i in range(0, len(X), 64):
        optimizer.zero_grad()
        loss = criterion(model(X[i:i + 64]), y[i:i + 64])
        loss.backward()
        optimizer.step()
print(loss.item())
