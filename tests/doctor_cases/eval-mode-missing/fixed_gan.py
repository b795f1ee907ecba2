# A small GAN on a 2-D ring of Gaussians, two optimizers. The discriminator step makes its
# fakes under torch.no_grad(), and samples are drawn under no_grad for logging, with the
# generator's BatchNorm in training mode as GANs usually keep it.
import math

import torch
from torch import nn

torch.manual_seed(0)


def real_batch(n: int) -> torch.Tensor:
    angle = torch.randint(0, 8, (n,)).float() * (2 * math.pi / 8)
    return torch.stack([angle.cos(), angle.sin()], 1) * 2 + 0.05 * torch.randn(n, 2)


G = nn.Sequential(nn.Linear(8, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64), nn.BatchNorm1d(64),
                  nn.ReLU(), nn.Linear(64, 2))
D = nn.Sequential(nn.Linear(2, 64), nn.LeakyReLU(0.2), nn.Linear(64, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
fixed_noise = torch.randn(64, 8)

for it in range(300):
    real = real_batch(64)
    with torch.no_grad():
        fake = G(torch.randn(64, 8))
    d_loss = bce(D(real), torch.ones(64, 1)) + bce(D(fake), torch.zeros(64, 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()

    fake = G(torch.randn(64, 8))
    g_loss = bce(D(fake), torch.ones(64, 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    if it % 50 == 0:
        with torch.no_grad():
            samples = G(fixed_noise)
        print(f"iter {it} d {d_loss.item():.3f} g {g_loss.item():.3f} sample spread {samples.std().item():.3f}")
