# The forward flattens with a hard-coded feature size that is too small: x.view(-1, 16)
# turns each sample's 64 values into 4 rows, so the loss sees 4x more predictions than labels.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Blobs(Dataset):
    def __init__(self, n: int = 512) -> None:
        g = torch.Generator().manual_seed(0)
        self.y = torch.randint(0, 4, (n,), generator=g)
        self.x = torch.randn(n, 4, 16, generator=g) + self.y[:, None, None].float()

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.view(-1, 16))


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.NLLLoss()
for epoch in range(2):
    for xb, yb in DataLoader(Blobs(), batch_size=32, shuffle=True):
        opt.zero_grad()
        loss = criterion(torch.log_softmax(model(xb), dim=1), yb)
        loss.backward()
        opt.step()
