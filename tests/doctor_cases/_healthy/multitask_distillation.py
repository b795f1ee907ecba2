# Two heads (digit class + "is the digit odd"), learned uncertainty weights, and a frozen
# teacher evaluated under no_grad in training mode (its outputs are soft targets).
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
d = load_digits()
x = torch.tensor(d.data, dtype=torch.float32) / 16.0
y = torch.tensor(d.target)
odd = (y % 2).float()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.1))
        self.digit = nn.Linear(64, 10)
        self.parity = nn.Linear(64, 1)
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        h = self.body(x)
        return self.digit(h), self.parity(h).squeeze(1)


teacher = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10))
student = Net()
opt = torch.optim.Adam(student.parameters(), lr=2e-3)
for epoch in range(5):
    for i in range(0, 1700, 64):
        xb, yb, ob = x[i:i + 64], y[i:i + 64], odd[i:i + 64]
        with torch.no_grad():
            soft = F.softmax(teacher(xb) / 2.0, dim=1)
        logits, parity = student(xb)
        l1 = F.cross_entropy(logits, yb, label_smoothing=0.05)
        l2 = F.binary_cross_entropy_with_logits(parity, ob)
        kd = F.kl_div(F.log_softmax(logits / 2.0, dim=1), soft, reduction="batchmean")
        lv = student.log_vars
        loss = torch.exp(-lv[0]) * l1 + lv[0] + torch.exp(-lv[1]) * l2 + lv[1] + 0.1 * kd
        opt.zero_grad()
        loss.backward()
        opt.step()
print(f"loss {loss.item():.3f}")
