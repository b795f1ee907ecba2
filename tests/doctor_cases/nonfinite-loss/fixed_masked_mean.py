# Semi-supervised regression with a masked mean whose denominator can never be 0.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class PartlyLabelled(Dataset):
    def __init__(self, n=400):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 8, generator=g)
        self.y = self.x[:, :3].sum(1, keepdim=True)
        self.has_label = (torch.rand(n, 1, generator=g) < 0.1).float()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i], self.has_label[i]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
model = Regressor()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for xb, yb, mb in DataLoader(PartlyLabelled(), batch_size=8, shuffle=True):
        err = (model(xb) - yb) ** 2
        loss = (err * mb).sum() / mb.sum().clamp_min(1.0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
print("done")
