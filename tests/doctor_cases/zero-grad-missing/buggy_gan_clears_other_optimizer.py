# A small GAN on a ring of 2-D points, written as a trainer class. The critic's update clears
# the generator's optimizer (a copy-paste slip), so the critic's gradients are never cleared.
import math

import torch
from torch import nn


class RingGAN:
    def __init__(self, noise: int = 8) -> None:
        self.noise = noise
        self.gen = nn.Sequential(nn.Linear(noise, 64), nn.ReLU(), nn.Linear(64, 2))
        self.critic = nn.Sequential(nn.Linear(2, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
        self.gen_opt = torch.optim.Adam(self.gen.parameters(), lr=1e-3, betas=(0.5, 0.9))
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
        self.loss = nn.BCEWithLogitsLoss()

    def real_batch(self, n: int) -> torch.Tensor:
        angle = torch.rand(n) * 2 * math.pi
        return torch.stack([angle.cos(), angle.sin()], 1) * 2 + 0.05 * torch.randn(n, 2)

    def critic_update(self, real: torch.Tensor) -> float:
        fake = self.gen(torch.randn(len(real), self.noise)).detach()
        self.gen_opt.zero_grad()
        scores = self.critic(torch.cat([real, fake]))
        target = torch.cat([torch.ones(len(real), 1), torch.zeros(len(fake), 1)])
        loss = self.loss(scores, target)
        loss.backward()
        self.critic_opt.step()
        return loss.item()

    def generator_update(self, n: int) -> float:
        self.gen_opt.zero_grad()
        loss = self.loss(self.critic(self.gen(torch.randn(n, self.noise))), torch.ones(n, 1))
        loss.backward()
        self.gen_opt.step()
        return loss.item()


torch.manual_seed(11)
gan = RingGAN()
for it in range(200):
    c = gan.critic_update(gan.real_batch(128))
    g = gan.generator_update(128)
    if it % 50 == 0:
        print(f"iteration {it}: critic {c:.3f} generator {g:.3f}")
