# Four weather classes (0..3) trained with a single output and BCEWithLogits on the class index.
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Weather(Dataset):
    def __init__(self, n=480):
        g = torch.Generator().manual_seed(0)
        self.kind = torch.randint(0, 4, (n,), generator=g)
        self.x = torch.randn(n, 6, generator=g) * 0.5
        self.x[:, :4] += F.one_hot(self.kind, 4).float()

    def __len__(self):
        return len(self.kind)

    def __getitem__(self, i):
        return self.x[i], self.kind[i].float()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(6, 32)
        self.l2 = nn.Linear(32, 1)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x))).squeeze(1)


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for xb, yb in DataLoader(Weather(), batch_size=32, shuffle=True):
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(xb), yb)
        loss.backward()
        opt.step()
print("loss", loss.item())
