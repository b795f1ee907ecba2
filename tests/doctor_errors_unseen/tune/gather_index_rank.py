# source: https://github.com/pytorch/pytorch/issues/134244
# original: RuntimeError: Index tensor must have the same number of dimensions as input tensor
# half: tune
# cause mentions: unsqueeze|same number of dimensions
import torch
from torch import nn

torch.manual_seed(0)
q_net = nn.Linear(4, 2)
states = torch.randn(16, 4)
actions = torch.randint(0, 2, (16,))
q_values = q_net(states)
q_taken = q_values.gather(1, actions)  # <- fails
loss = ((q_taken - torch.ones(16)) ** 2).mean()
