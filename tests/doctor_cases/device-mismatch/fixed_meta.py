# Built on the meta device, then materialised on a real device and initialised before training.
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
device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.randn(256, 10)
y = x[:, :3].sum(1, keepdim=True)
with torch.device("meta"):
    model = Net()
model = model.to_empty(device=device)
for layer in (model.hidden, model.out):
    layer.reset_parameters()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(3):
    for i in range(0, 256, 32):
        xb, yb = x[i:i + 32].to(device), y[i:i + 32].to(device)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
print("done", loss.item())
