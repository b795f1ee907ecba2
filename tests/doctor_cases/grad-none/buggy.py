# A NumPy round trip inside forward() cuts the graph: fc1 never gets a gradient.
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 20)
y = (x[:, :2].sum(1) > 0).long()


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x).detach().numpy()
        h = torch.from_numpy(np.maximum(h, 0.0))  # ReLU done in NumPy
        return self.fc2(h)


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    for i in range(0, 512, 32):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
