# Multi-label tagging with sigmoid probabilities and F.binary_cross_entropy (BCELoss): correct.
import torch
import torch.nn.functional as F
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 32)
        self.tags = nn.Linear(32, 5)

    def forward(self, x):
        return torch.sigmoid(self.tags(torch.relu(self.body(x))))


torch.manual_seed(0)
n = 640
x = torch.randn(n, 16)
w = torch.randn(16, 5)
targets = (x @ w > 0.5).float()
model = Tagger()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(3):
    for i in range(0, n, 64):
        probs = model(x[i:i + 64])
        loss = F.binary_cross_entropy(probs, targets[i:i + 64])
        model.zero_grad()
        loss.backward()
        opt.step()
print("loss", loss.item())
