# A configurable-depth MLP whose hidden blocks are kept in an nn.ModuleList.
import torch
import torch.nn.functional as F
from torch import nn


class DeepMLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.blocks = nn.ModuleList()
        for a, b in zip(sizes, sizes[1:]):
            self.blocks.append(nn.Linear(a, b))

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i < len(self.blocks) - 1:
                x = F.gelu(x)
        return x


torch.manual_seed(0)
x = torch.randn(200, 6)
y = torch.sin(x).sum(1, keepdim=True)
net = DeepMLP([6, 64, 64, 1])
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for epoch in range(30):
    opt.zero_grad()
    F.mse_loss(net(x), y).backward()
    opt.step()
