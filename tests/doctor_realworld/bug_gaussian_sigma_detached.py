# expect: grad-none
# A heteroscedastic regression with torch.distributions; the noise scale was detached "to be safe".
import torch
from torch import nn
from torch.distributions import Normal


class GaussianRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
        self.log_sigma = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return Normal(self.mean(x), self.log_sigma.exp().detach())


torch.manual_seed(0)
x = torch.rand(256, 1) * 6 - 3
y = torch.sin(x) + 0.3 * torch.randn_like(x)
model = GaussianRegressor()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(60):
    opt.zero_grad()
    loss = -model(x).log_prob(y).mean()
    loss.backward()
    opt.step()
