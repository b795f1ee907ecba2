# expect: none
# Heteroscedastic regression: the net predicts a mean and a log-scale, and the loss is the
# negative log-likelihood from torch.distributions.Normal. The loss goes negative as the
# predicted noise shrinks, which is expected for a density.
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)
torch.set_num_threads(1)

x = torch.linspace(-3, 3, 1200).unsqueeze(1)
noise_sd = 0.05 + 0.2 * (x + 3) / 6
y = torch.sin(2 * x) + noise_sd * torch.randn_like(x)
perm = torch.randperm(len(x))
tr, va = perm[:1000], perm[1000:]


class MeanScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU())
        self.mu = nn.Linear(64, 1)
        self.log_sigma = nn.Linear(64, 1)

    def forward(self, inp):
        h = self.body(inp)
        return self.mu(h), self.log_sigma(h).clamp(-6, 3)


net = MeanScale()
opt = torch.optim.Adam(net.parameters(), lr=3e-3)
for it in range(1500):
    b = tr[torch.randint(0, len(tr), (128,))]
    mu, log_sigma = net(x[b])
    nll = -Normal(mu, log_sigma.exp()).log_prob(y[b]).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if it % 300 == 0 or it == 1499:
        with torch.no_grad():
            mu_v, ls_v = net(x[va])
            val_nll = -Normal(mu_v, ls_v.exp()).log_prob(y[va]).mean().item()
            rmse = F.mse_loss(mu_v, y[va]).sqrt().item()
        print(f"it {it}: nll {nll.item():.3f}  val nll {val_nll:.3f}  val rmse {rmse:.3f}")
