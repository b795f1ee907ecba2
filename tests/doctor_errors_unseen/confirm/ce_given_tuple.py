# source: https://github.com/CASIA-IVA-Lab/DANet/issues/137
# original: TypeError: cross_entropy_loss(): argument 'input' (position 1) must be Tensor, not tuple
# half: confirm
# cause mentions: tuple
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(10, 16)
        self.head = nn.Linear(16, 4)
        self.aux = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(self.body(x))
        return self.head(h), self.aux(h)  # a main and an auxiliary output


torch.manual_seed(0)
model = Net()
criterion = nn.CrossEntropyLoss()
x, target = torch.randn(8, 10), torch.randint(0, 4, (8,))
outputs = model(x)
loss = criterion(outputs, target)  # <- fails
