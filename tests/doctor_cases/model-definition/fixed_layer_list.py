# The same configurable CNN with its conv blocks in an nn.ModuleList, so the optimizer trains them.
import torch
import torch.nn.functional as F
from torch import nn


class ConfigurableCNN(nn.Module):
    def __init__(self, channels=(1, 8, 16), classes=4):
        super().__init__()
        self.blocks = nn.ModuleList()
        for c_in, c_out in zip(channels, channels[1:]):
            self.blocks.append(nn.Conv2d(c_in, c_out, 3, padding=1))
        self.head = nn.Linear(channels[-1], classes)

    def forward(self, x):
        for conv in self.blocks:
            x = F.max_pool2d(F.relu(conv(x)), 2)
        return self.head(x.mean(dim=(2, 3)))


torch.manual_seed(0)
images = torch.randn(64, 1, 16, 16)
labels = torch.randint(0, 4, (64,))
model = ConfigurableCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(12):
    for i in range(0, 64, 16):
        optimizer.zero_grad()
        F.cross_entropy(model(images[i:i + 16]), labels[i:i + 16]).backward()
        optimizer.step()
