"""Least-squares GAN on a 2-D ring of points: the discriminator's (N, 1) scores are pulled towards a flat
vector of ones or zeros. The shapes broadcast, but every target is the same number, so the loss is exactly
the one a (N, 1) target gives."""
import math

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(12)
angle = torch.rand(2048) * 2 * math.pi
real_points = torch.stack([torch.cos(angle), torch.sin(angle)], 1) + 0.05 * torch.randn(2048, 2)

G = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))
n = 64
for it in range(150):
    real = real_points[torch.randint(0, 2048, (n,))]
    fake = G(torch.randn(n, 4))
    d_loss = 0.5 * (F.mse_loss(D(real), torch.ones(n)) + F.mse_loss(D(fake.detach()), torch.zeros(n)))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = 0.5 * F.mse_loss(D(fake), torch.full((n,), 1.0))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
print(f"D {d_loss.item():.3f}  G {g_loss.item():.3f}")
