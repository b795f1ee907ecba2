# The same notebook-turned-script with the constructor spelt __init__.
import torch
import torch.nn.functional as F
from torch import nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


torch.manual_seed(0)
net = TinyNet()
batch = torch.randn(8, 4)
print(net(batch).shape)
