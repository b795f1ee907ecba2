# Full-batch regression with the optimizer built from the final model. Training is slow on purpose
# (plain SGD with a small learning rate), but the loss steadily decreases.
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


torch.manual_seed(0)
x = torch.randn(500, 6)
y = torch.sin(x[:, :3].sum(1)) + 0.1 * torch.randn(500)

model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.002)
criterion = nn.MSELoss()

for epoch in range(150):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if epoch % 50 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")
