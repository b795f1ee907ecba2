# source: https://github.com/pyg-team/pytorch_geometric/issues/681
# original: AttributeError: cannot assign module before Module.__init__() call
# half: tune
# cause mentions: super().__init__
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self, in_channels: int) -> None:
        self.fc1 = nn.Linear(in_channels, 2 * in_channels)  # <- fails
        super().__init__()
        self.fc2 = nn.Linear(2 * in_channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


model = Discriminator(16)
print(model(torch.randn(4, 16)))
