# The price regressor with a sane SGD learning rate, gradient clipping and a step schedule.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Houses(Dataset):
    def __init__(self, n=2000):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 8, generator=g)
        w = torch.randn(8, 1, generator=g)
        self.y = 3.0 * (self.x @ w) + 5.0 + 0.5 * torch.randn(n, 1, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 64)
        self.out = nn.Linear(64, 1)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


torch.manual_seed(0)
model = Regressor()
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
loader = DataLoader(Houses(), batch_size=32, shuffle=True)

for epoch in range(2):
    total = 0.0
    for xb, yb in loader:
        model.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()
        total += loss.item()
    scheduler.step()
    print(f"epoch {epoch}: mean loss {total / len(loader):.3f}")
