# Digits with a custom Dataset; the initial weights are loaded once. Linear warm-up from lr 0,
# and a parameter group with lr 0 on purpose (the first layer is kept fixed this way).
import copy

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
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


model = Net()
init_state = copy.deepcopy(model.state_dict())
model.load_state_dict(init_state)
opt = torch.optim.Adam([{"params": model.fc1.parameters(), "lr": 0.0},
                        {"params": model.fc2.parameters()}], lr=1e-2)
warmup = 20
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / warmup))
loader = DataLoader(Digits(), batch_size=64, shuffle=True)

for epoch in range(2):
    for xb, yb in loader:
        model.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        sched.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
