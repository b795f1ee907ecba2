# Digits with a DataLoader: the epoch's running loss is summed as a tensor, which chains every
# batch's graph onto the running total.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
d = load_digits()
data = TensorDataset(torch.tensor(d.data, dtype=torch.float32) / 16.0, torch.tensor(d.target))
loader = DataLoader(data, batch_size=32, shuffle=True)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    running_loss = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        running_loss += loss  # bug: should be loss.item()
    print(f"epoch {epoch} loss {running_loss.item() / len(loader):.3f}")
