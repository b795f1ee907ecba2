# expect: model-definition
# "Only the last layer seems to learn" - hidden layers kept in a Python list, the head registered normally.
import torch
from torch import nn


class ResidualMLP(nn.Module):
    def __init__(self, dim=32, depth=3):
        super().__init__()
        self.inp = nn.Linear(8, dim)
        self.hidden = [nn.Linear(dim, dim) for _ in range(depth)]
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        x = torch.relu(self.inp(x))
        for layer in self.hidden:
            x = x + torch.relu(layer(x))
        return self.head(x)


torch.manual_seed(0)
X = torch.randn(256, 8)
y = (X ** 2).sum(1, keepdim=True)
model = ResidualMLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(40):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
