"""Trains through torch.compile (a module and a function) long enough to pass many of the doctor's sampled steps;
prints the losses and how many graphs Dynamo compiled (more under the doctor would mean it recompiled)."""
import sys

import torch
import torch.nn.functional as F
from torch import nn

backend = sys.argv[1]
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(F.relu(self.a(x)))


net = Net()
fast = torch.compile(net, backend=backend)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
for step in range(int(sys.argv[2])):
    opt.zero_grad()
    loss = F.cross_entropy(fast(x), y)
    loss.backward()
    opt.step()
print("loss", round(loss.item(), 4))


@torch.compile(backend=backend)
def score(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(net(x), F.one_hot(y, 3).float())


print("score", round(score(x, y).item(), 4))
from torch._dynamo.utils import counters  # noqa: E402

print("graphs", counters["stats"]["unique_graphs"])
