# expect: none
# Tiny 1-D GAN: fakes for the D step are sampled under no_grad; G is trained through D.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)

G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()


def real_batch(n):
    theta = torch.rand(n) * 6.283
    return torch.stack([torch.cos(theta), torch.sin(theta)], 1) + 0.05 * torch.randn(n, 2)


for step in range(300):
    real = real_batch(64)
    with torch.no_grad():
        fake = G(torch.randn(64, 8))
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(64, 1)) + bce(D(fake), torch.zeros(64, 1))
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = bce(D(G(torch.randn(64, 8))), torch.ones(64, 1))
    g_loss.backward()
    opt_g.step()
    if step % 100 == 0:
        print(step, d_loss.item(), g_loss.item())
