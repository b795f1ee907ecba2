# expect: zero-grad-missing
# zero_grad is called, but on a second optimizer that owns nothing the loop steps
# (copy-paste from a fine-tuning tutorial): the real optimizer's grads are never cleared.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(10, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


model = MLP()
X = torch.randn(512, 10)
y = X[:, :1] * 2.0 - X[:, 1:2] + 0.1 * torch.randn(512, 1)

head_opt = torch.optim.SGD(model.out.parameters(), lr=0.01)   # left over from an experiment
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(10):
    for i in range(0, 512, 32):
        xb, yb = X[i:i + 32], y[i:i + 32]
        head_opt.zero_grad()
        pred = model(xb)
        loss = F.mse_loss(pred, yb)
        loss.backward()
        opt.step()
    print(epoch, loss.item())
