# A Dataset builds a ratio feature (income per household member); empty households divide by zero -> inf.
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Households(Dataset):
    def __init__(self, n=800):
        g = torch.Generator().manual_seed(0)
        self.income = torch.rand(n, generator=g) * 5 + 1
        self.members = torch.randint(0, 6, (n,), generator=g).float()  # 0 = vacant home, kept by mistake
        self.age = torch.rand(n, generator=g)
        self.y = ((self.income > 3.5) ^ (self.age > 0.5)).long()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        per_member = self.income[i] / self.members[i]
        return torch.stack([self.income[i] / 6, per_member, self.age[i]]), self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 32), nn.Tanh())
        self.head = nn.Linear(32, 2)

    def forward(self, x):
        return self.head(self.body(x))


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(Households(), batch_size=32, shuffle=True)
for epoch in range(3):
    for xb, yb in loader:
        model.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
print("done")
