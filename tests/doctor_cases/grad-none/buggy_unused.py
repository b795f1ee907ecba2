# Digits with a DataLoader: a hidden layer is defined but forward() skips it. Module loss,
# gradients cleared with set_to_none.
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
d = load_digits()
data = TensorDataset(torch.tensor(d.data, dtype=torch.float32) / 16.0, torch.tensor(d.target))
loader = DataLoader(data, batch_size=64, shuffle=True)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(64, 128)
        self.hidden = nn.Linear(128, 128)
        self.out = nn.Linear(128, 10)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.inp(x))
        return self.out(h)  # bug: self.hidden is never applied


model = MLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for epoch in range(2):
    for xb, yb in loader:
        opt.zero_grad(set_to_none=True)
        loss = criterion(model(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
