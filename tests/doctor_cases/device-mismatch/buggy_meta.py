# The model is built on the meta device (shapes only, to "initialise faster") and never
# materialised on a real device; the batches live on the CPU.
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(10, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(x)))


torch.manual_seed(0)
x = torch.randn(256, 10)
y = x[:, :3].sum(1, keepdim=True)
with torch.device("meta"):
    model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(0, 256, 32):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x[i:i + 32]), y[i:i + 32])
    loss.backward()
    opt.step()
