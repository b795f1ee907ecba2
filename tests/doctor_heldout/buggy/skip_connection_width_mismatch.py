# expect: shape-mismatch
# A "residual" connection adds the 30-dim input to the 64-dim hidden state; the widths differ
# and there is no projection. Crashes in the first forward pass.
import torch
from torch import nn
import torch.nn.functional as F
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

torch.manual_seed(0)
torch.set_num_threads(1)

data = load_breast_cancer()
X = torch.tensor(StandardScaler().fit_transform(data.data), dtype=torch.float32)
y = torch.tensor(data.target, dtype=torch.float32)


class SkipNet(nn.Module):
    def __init__(self, d=30, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = F.silu(self.fc1(x))
        h = F.silu(self.fc2(h)) + x          # skip connection
        return self.head(h).squeeze(-1)


net = SkipNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for step in range(200):
    idx = torch.randint(0, len(X), (64,))
    loss = F.binary_cross_entropy_with_logits(net(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(step, round(loss.item(), 4))
