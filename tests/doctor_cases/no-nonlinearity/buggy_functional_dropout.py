"""A wine-quality classifier whose forward() applies dropout between its two layers but no activation:
F.dropout only zeroes and rescales values, so hidden -> output is still one linear map."""
import torch
import torch.nn.functional as F
from sklearn.datasets import load_wine
from torch import nn


class WineNet(nn.Module):
    def __init__(self, features: int, classes: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(features, 96)
        self.out = nn.Linear(96, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.hidden(x)
        h = F.dropout(h, p=0.25, training=self.training)
        return self.out(h)


wine = load_wine()
x = torch.tensor(wine.data, dtype=torch.float32)
x = (x - x.mean(0)) / x.std(0)
y = torch.tensor(wine.target)
torch.manual_seed(3)
order = torch.randperm(len(y))
train, test = order[:140], order[140:]

net = WineNet(x.shape[1], 3)
optimizer = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-2)
for epoch in range(60):
    net.train()
    for chunk in train.split(20):
        optimizer.zero_grad()
        F.cross_entropy(net(x[chunk]), y[chunk]).backward()
        optimizer.step()
net.eval()
with torch.no_grad():
    print("test accuracy", (net(x[test]).argmax(1) == y[test]).float().mean().item())
