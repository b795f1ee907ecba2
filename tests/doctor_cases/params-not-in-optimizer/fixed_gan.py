# A small GAN on 2-D points: two models, two optimizers; the generator's loss flows through the
# discriminator (whose params get gradients there but are owned by the other optimizer).
import torch
from torch import nn

torch.manual_seed(0)
real_data = torch.randn(2048, 2) * 0.5 + torch.tensor([2.0, -1.0])
G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()

for step in range(150):
    real = real_data[torch.randint(0, 2048, (64,))]
    fake = G(torch.randn(64, 8))
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(64, 1)) + bce(D(fake.detach()), torch.zeros(64, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(64, 1))
    g_loss.backward()
    opt_g.step()
    if step % 50 == 0:
        print(f"step {step} d {d_loss.item():.3f} g {g_loss.item():.3f}")
