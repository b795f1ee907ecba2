# Transfer-learning style on the digits: the classifier head is replaced for the new task after
# the optimizer was created, so the new head is never trained (custom Dataset, DataLoader).
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class Digits(Dataset):
    def __init__(self) -> None:
        d = load_digits()
        self.x = torch.tensor(d.data, dtype=torch.float32) / 16.0
        self.y = torch.tensor(d.target)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))


model = Net(classes=2)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
model.head = nn.Linear(32, 10)  # bug: the new head is not in the optimizer
loader = DataLoader(Digits(), batch_size=64, shuffle=True)

for epoch in range(2):
    for xb, yb in loader:
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
