# expect: none
# Heteroscedastic regression: the loss is -Normal(mu, sigma).log_prob(y), which goes negative.
import torch
from torch import nn
from torch.distributions import Normal


class MeanStd(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh())
        self.mu = nn.Linear(32, 1)
        self.log_std = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return Normal(self.mu(h), self.log_std(h).clamp(-5, 2).exp())


torch.manual_seed(0)
x = torch.rand(512, 1) * 4 - 2
y = 0.5 * x ** 2 + 0.05 * torch.randn_like(x)
model = MeanStd()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(80):
    opt.zero_grad()
    loss = -model(x).log_prob(y).mean()
    loss.backward()
    opt.step()
