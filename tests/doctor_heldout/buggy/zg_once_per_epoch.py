# expect: zero-grad-missing
# zero_grad() is called once at the start of each epoch instead of every batch.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)

X = torch.randn(2000, 20)
w = torch.randn(20, 1)
y = (X @ w > 0).float()
loader = DataLoader(TensorDataset(X, y), batch_size=50, shuffle=True)

model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 1))
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(4):
    optimizer.zero_grad()
    running = 0.0
    for batch_idx, (xb, yb) in enumerate(loader):
        logits = model(xb)
        loss = criterion(logits, yb)
        loss.backward()
        optimizer.step()
        running += loss.item()
    print("epoch", epoch, "loss", running / len(loader))
