# Digits with a custom Dataset; the loop "resets" the model to the saved initial weights at every
# batch (meant to happen once), so every step's update is thrown away.
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
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(Digits(), batch_size=64, shuffle=True)

for epoch in range(2):
    for xb, yb in loader:
        model.load_state_dict(init_state)  # bug: belongs before the loop
        model.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
