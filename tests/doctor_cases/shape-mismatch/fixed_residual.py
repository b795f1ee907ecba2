# The residual block with a 1x1 projection on the skip path when the channels change.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
x = torch.randn(128, 8, 12, 12)
y = (x.mean((1, 2, 3)) > 0).long()


class Block(nn.Module):
    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.bn = nn.BatchNorm2d(c_out)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.skip(x) + self.bn(self.conv(x)))


model = nn.Sequential(Block(8, 16), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(10):
    idx = torch.randint(0, 128, (32,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    model.zero_grad()
    loss.backward()
    opt.step()
print("done", loss.item())
