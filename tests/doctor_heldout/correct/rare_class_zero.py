# expect: none
# Imbalanced 4-class problem where class 0 is rare (~2%); weighted CrossEntropyLoss.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)

n = 2000
y = torch.multinomial(torch.tensor([0.02, 0.33, 0.33, 0.32]), n, replacement=True)
centers = torch.randn(4, 6) * 2
X = centers[y] + torch.randn(n, 6)
counts = torch.bincount(y, minlength=4).float()
weights = counts.sum() / (4 * counts)

loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 4))
crit = nn.CrossEntropyLoss(weight=weights)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for xb, yb in loader:
        opt.zero_grad()
        loss = crit(model(xb), yb)
        loss.backward()
        opt.step()
    print(epoch, loss.item())
