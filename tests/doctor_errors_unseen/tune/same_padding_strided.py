# source: https://github.com/alvinliu0/HA2G/issues/16
# original: ValueError: padding='same' is not supported for strided convolutions
# half: tune
# cause mentions: stride
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(64, 128, kernel_size=5, stride=2, padding="same")  # <- fails

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


print(Encoder()(torch.randn(2, 64, 100)).shape)
