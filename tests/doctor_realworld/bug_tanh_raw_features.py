# expect: saturated-activations
# "Accuracy stuck at 60 %": a tanh network on raw tabular features (income, age, balance) never normalized.
import torch
from torch import nn

torch.manual_seed(0)
n = 512
income = torch.rand(n, 1) * 90000 + 10000
age = torch.rand(n, 1) * 60 + 18
balance = torch.rand(n, 1) * 20000
X = torch.cat([income, age, balance], 1)
y = ((income / 100000 + balance / 20000) > 1.0).long().squeeze(1)

model = nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(40):
    for i in range(0, n, 64):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X[i:i + 64]), y[i:i + 64])
        loss.backward()
        opt.step()
