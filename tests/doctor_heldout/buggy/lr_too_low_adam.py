# expect: lr-too-low
# Adam with lr=1e-9 (typo for 1e-3): nothing moves.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
loader = DataLoader(TensorDataset(torch.tensor(d.data / 16.0, dtype=torch.float32),
                                  torch.tensor(d.target)), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-9)
for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
