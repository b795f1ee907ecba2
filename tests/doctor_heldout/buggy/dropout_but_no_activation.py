# expect: no-nonlinearity
# forward() chains fc1 -> dropout -> fc2 -> dropout -> fc3; the activation calls were lost in a
# refactor (Dropout is not a nonlinearity), so the whole net is one linear map: it cannot bend
# its decision boundary around the two moons.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import make_moons

torch.manual_seed(0)
torch.set_num_threads(1)


class MoonsNet(nn.Module):
    def __init__(self, hidden=64, p=0.1):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, 2)
        self.p = p

    def forward(self, x):
        x = F.dropout(self.fc1(x), self.p, self.training)
        x = F.dropout(self.fc2(x), self.p, self.training)
        return self.fc3(x)


X, y = make_moons(n_samples=2000, noise=0.1, random_state=0)
X, y = torch.tensor(X, dtype=torch.float32), torch.tensor(y)
Xtr, ytr, Xte, yte = X[:1500], y[:1500], X[1500:], y[1500:]

net = MoonsNet()
opt = torch.optim.Adam(net.parameters(), lr=3e-3)
for epoch in range(15):
    net.train()
    perm = torch.randperm(1500)
    for i in range(0, 1500, 50):
        b = perm[i:i + 50]
        opt.zero_grad()
        loss = F.cross_entropy(net(Xtr[b]), ytr[b])
        loss.backward()
        opt.step()
    if epoch % 5 == 4:
        net.eval()
        with torch.no_grad():
            acc = (net(Xte).argmax(1) == yte).float().mean().item()
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}  test acc {acc:.3f}")
