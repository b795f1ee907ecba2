# expect: none
# Shared trunk, classification head + regression head, summed losses.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 64), nn.ReLU())
        self.cls_head = nn.Linear(64, 3)
        self.reg_head = nn.Linear(64, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.reg_head(h)


X = torch.randn(1200, 10)
y_cls = X[:, :3].argmax(1)
y_reg = (X[:, 3] * 2 + X[:, 4]).unsqueeze(1)
model = MultiTask()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(4):
    for i in range(0, 1200, 40):
        logits, reg = model(X[i:i + 40])
        loss = F.cross_entropy(logits, y_cls[i:i + 40]) + 0.5 * F.mse_loss(reg, y_reg[i:i + 40])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, loss.item())
