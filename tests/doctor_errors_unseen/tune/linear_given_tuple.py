# source: https://github.com/raoyongming/CAL/issues/15
# original: TypeError: linear(): argument 'input' (position 1) must be Tensor, not tuple
# half: tune
# cause mentions: tuple
import torch
from torch import nn


class BAP(nn.Module):
    def forward(self, features: torch.Tensor, attentions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        matrix = torch.einsum("imjk,injk->imn", attentions, features) / features.shape[2] / features.shape[3]
        return matrix.flatten(1), attentions.mean((2, 3))


torch.manual_seed(0)
bap = BAP()
fc = nn.Linear(4 * 8, 10)
features, attentions = torch.randn(2, 8, 7, 7), torch.rand(2, 4, 7, 7)
feature_matrix = bap(features, attentions)  # returns two values
p = fc(feature_matrix * 100)  # <- fails
