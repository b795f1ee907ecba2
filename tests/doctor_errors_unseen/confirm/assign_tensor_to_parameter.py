# source: https://github.com/pytorch/pytorch/issues/44022
# original: TypeError: cannot assign 'torch.FloatTensor' as parameter 'layer_weights' (torch.nn.Parameter or None expected)
# half: confirm
# cause mentions: local|another name|different name
import torch
from torch import nn
import torch.nn.functional as F


class LayerMix(nn.Module):
    def __init__(self, layers: int) -> None:
        super().__init__()
        self.layer_weights = nn.Parameter(torch.ones(layers))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        self.layer_weights = F.softmax(self.layer_weights, dim=0)  # <- fails
        return (hidden * self.layer_weights[:, None, None]).sum(0)


torch.manual_seed(0)
mix = LayerMix(4)
print(mix(torch.randn(4, 2, 8)).shape)
