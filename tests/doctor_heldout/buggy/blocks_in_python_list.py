# expect: model-definition
# The hidden blocks are kept in a plain Python list instead of nn.ModuleList, so they are not
# registered: parameters() (and the optimizer) only sees the output layer; the blocks stay random.
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

torch.manual_seed(4)
torch.set_num_threads(1)


class DeepMLP(nn.Module):
    def __init__(self, d_in=64, width=32, depth=4, n_out=10):
        super().__init__()
        self.inp = nn.Linear(d_in, width)
        self.blocks = []
        for _ in range(depth):
            self.blocks.append(nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.ReLU()))
        self.out = nn.Linear(width, n_out)

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        return self.out(h)


X, y = load_digits(return_X_y=True)
X = (X - X.mean(0)) / (X.std(0) + 1e-3)
xtr, xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
xtr, xte = torch.tensor(xtr, dtype=torch.float32), torch.tensor(xte, dtype=torch.float32)
ytr, yte = torch.tensor(ytr), torch.tensor(yte)

net = DeepMLP()
print("trainable tensors:", sum(1 for _ in net.parameters()))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
lossf = nn.CrossEntropyLoss()

for ep in range(6):
    perm = torch.randperm(len(xtr))
    for i in range(0, len(perm), 64):
        j = perm[i:i + 64]
        opt.zero_grad()
        lossf(net(xtr[j]), ytr[j]).backward()
        opt.step()
    with torch.no_grad():
        print(f"epoch {ep}: test acc {(net(xte).argmax(1) == yte).float().mean().item():.3f}")
