# expect: none
# optimizer.zero_grad(set_to_none=False) each step.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)

X = torch.randn(1000, 12)
y = (X[:, 0] * X[:, 1] > 0).float().unsqueeze(1)
loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
crit = nn.BCEWithLogitsLoss()
for epoch in range(5):
    for i, (xb, yb) in enumerate(loader):
        opt.zero_grad(set_to_none=False)
        loss = crit(model(xb), yb)
        loss.backward()
        opt.step()
    print(epoch, loss.item())
