# source: https://github.com/EternalEvan/FlowIE/issues/11
# original: TypeError: optimizer can only optimize Tensors, but one of the params is Module.parameters
# half: tune
# cause mentions: chain|list(
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Linear(8, 8)
head = nn.Linear(8, 2)
opt = torch.optim.AdamW([backbone.parameters(), head.parameters()], lr=1e-3)  # <- fails
