# A critic trained towards one value for a whole batch: F.mse_loss against a 0-d target.
# PyTorch warns that the sizes differ, yet every prediction is compared with the same number, as meant.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(5)
states = torch.randn(512, 6)
critic = nn.Sequential(nn.Linear(6, 32), nn.ELU(), nn.Linear(32, 1))
opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
goal = torch.tensor(0.5)
for step in range(120):
    batch = states[torch.randint(0, 512, (64,))]
    values = critic(batch)
    loss = F.mse_loss(values, goal.expand_as(values)) if step % 2 else F.mse_loss(values.squeeze(1), goal)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("value", critic(states).mean().item())
