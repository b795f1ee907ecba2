# source: https://github.com/lupinjia/LeggedGym-Ex/issues/12
# original: ValueError: Expected parameter loc (Tensor of shape (4096, 12)) of distribution Normal(loc: torch.Size([4096, 12]), scale: torch.Size([4096, 12])) to satisfy the constraint Real(), but found invalid values:
# half: confirm
# cause mentions: nan
import torch
from torch import nn
from torch.distributions import Normal

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(8, 16), nn.ELU(), nn.Linear(16, 4))
std = torch.ones(4)
obs = torch.randn(32, 8)
obs[3, 2] = float("nan")  # one environment returned a broken observation
mean = actor(obs)
distribution = Normal(mean, mean * 0.0 + std)  # <- fails
actions = distribution.sample()
