# expect: wrong-loss-for-task
# Digit classification treated as regression: one output, MSELoss against the class index.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
X = torch.tensor(d.data / 16.0, dtype=torch.float32)
y = torch.tensor(d.target, dtype=torch.float32)
loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for x, target in loader:
        optimizer.zero_grad()
        pred = model(x).squeeze(1)
        loss = criterion(pred, target)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
