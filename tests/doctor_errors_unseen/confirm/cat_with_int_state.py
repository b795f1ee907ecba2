# source: https://github.com/sunsmarterjie/GOLD_NAS/issues/1
# original: TypeError: expected Tensor as element 2 in argument 0, but got int
# half: confirm
# cause mentions: not a tensor|zeros
import torch
from torch import nn

torch.manual_seed(0)
ops = nn.ModuleList([nn.Conv2d(8, 8, 3, padding=1) for _ in range(2)])
weights = [1.0, 0.0]  # a pruned edge gives 0 instead of a feature map
x = torch.randn(2, 8, 6, 6)
states = [x, x]
for op, w in zip(ops, weights):
    states.append(op(x) * w if w > 0 else 0)
out = torch.cat(states[2:], dim=1)  # <- fails
