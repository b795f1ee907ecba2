# Sensor readings held in one tensor; training uses the first 900 rows and validation the last 100, which
# the model never trains on.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(3)
readings = torch.randn(1000, 6)
fresh = torch.randn(200, 6)  # a test batch recorded later
true_w = torch.tensor([[0.7], [-1.2], [0.3], [2.0], [0.0], [-0.5]])
target = readings @ true_w + 0.2 * torch.randn(1000, 1)
fresh_target = fresh @ true_w + 0.2 * torch.randn(200, 1)

train_x, train_y = readings[:900], target[:900]
val_x, val_y = readings[900:1000], target[900:1000]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 32), nn.SiLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.body(x)


net = Regressor()
opt = torch.optim.AdamW(net.parameters(), lr=5e-3)
for epoch in range(6):
    net.train()
    for idx in torch.randperm(900).split(50):
        loss = F.huber_loss(net(train_x[idx]), train_y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        val_loss = F.huber_loss(net(val_x), val_y)
    print(f"epoch {epoch}: validation huber {val_loss:.4f}")
with torch.no_grad():
    test_loss = F.huber_loss(net(fresh), fresh_target)
print(f"test huber {test_loss:.4f}")
