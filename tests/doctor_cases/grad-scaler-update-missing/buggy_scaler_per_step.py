"""A new GradScaler every iteration: it steps but is never updated, so the scale never adapts."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 2))

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(512, 20), torch.randint(0, 2, (512,)))
loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for epoch in range(2):
    for xb, yb in loader:
        scaler = torch.amp.GradScaler("cpu")
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = criterion(model(xb), yb)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
