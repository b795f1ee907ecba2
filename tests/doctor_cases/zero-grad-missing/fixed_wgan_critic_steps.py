# WGAN-GP on a 1-D mixture: five critic updates per generator update. The critic's gradients are
# dropped by hand (p.grad = None) before each of its updates; the generator's backward() runs
# through the critic and leaves gradients there, which the next critic update drops.
import torch
from torch import autograd, nn

torch.manual_seed(5)
critic = nn.Sequential(nn.Linear(1, 48), nn.Tanh(), nn.Linear(48, 48), nn.Tanh(), nn.Linear(48, 1))
maker = nn.Sequential(nn.Linear(4, 48), nn.Tanh(), nn.Linear(48, 1))
c_opt = torch.optim.Adam(critic.parameters(), lr=5e-4, betas=(0.0, 0.9))
m_opt = torch.optim.Adam(maker.parameters(), lr=5e-4, betas=(0.0, 0.9))


def sample_real(n):
    which = torch.rand(n, 1) < 0.3
    return torch.where(which, torch.randn(n, 1) * 0.2 - 1.5, torch.randn(n, 1) * 0.4 + 1.0)


def penalty(real, fake):
    mix = torch.rand(len(real), 1)
    point = (mix * real + (1 - mix) * fake).requires_grad_(True)
    (grad,) = autograd.grad(critic(point).sum(), point, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


for round_ in range(60):
    for _ in range(5):
        for p in critic.parameters():
            p.grad = None
        real = sample_real(96)
        fake = maker(torch.randn(96, 4)).detach()
        c_loss = critic(fake).mean() - critic(real).mean() + 10 * penalty(real, fake)
        c_loss.backward()
        c_opt.step()
    m_opt.zero_grad()
    m_loss = -critic(maker(torch.randn(96, 4))).mean()
    m_loss.backward()
    m_opt.step()
    if round_ % 20 == 0:
        print(f"round {round_}: critic {c_loss.item():.3f} maker {m_loss.item():.3f}")
