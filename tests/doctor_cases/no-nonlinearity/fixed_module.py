# Correct models with linear layers close together on purpose: a functional activation between
# layers, an input projection feeding a residual block, a low-rank adapter (down -> up), two
# parallel heads on the same features, and a multi-task loss.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
x = torch.randn(1024, 20)
y_cls = ((x[:, 0] * x[:, 1]) > 0).long()
y_reg = x[:, 2:4].sum(1, keepdim=True)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(20, 64)
        self.block = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64))
        self.down = nn.Linear(64, 4)
        self.up = nn.Linear(4, 64)
        self.fc = nn.Linear(64, 64)
        self.cls_head = nn.Linear(64, 2)
        self.reg_head = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.proj(x)
        h = h + self.block(h)  # residual
        h = h + self.up(self.down(h))  # low-rank adapter
        h = F.relu(self.fc(h))
        return self.cls_head(h), self.reg_head(h)


model = Net()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

for epoch in range(3):
    for i in range(0, 1024, 64):
        opt.zero_grad()
        logits, reg = model(x[i:i + 64])
        loss = F.cross_entropy(logits, y_cls[i:i + 64]) + 0.5 * F.mse_loss(reg, y_reg[i:i + 64])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
