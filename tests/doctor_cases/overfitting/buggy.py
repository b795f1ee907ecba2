# A wide MLP trained for many epochs on 150 digits (some labels wrong, as in hand-labelled data), validated
# every epoch; nothing stops it or regularises it.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)
perm = torch.randperm(len(y))
train_rows, val_rows = perm[:150], perm[150:550]
x_train, y_train = x[train_rows], y[train_rows].clone()
noisy = torch.rand(150) < 0.2
y_train[noisy] = torch.randint(0, 10, (int(noisy.sum()),))
x_val, y_val = x[val_rows], y[val_rows]

model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
history = []
for epoch in range(60):
    model.train()
    for batch in torch.randperm(150).split(25):
        optimizer.zero_grad()
        F.cross_entropy(model(x_train[batch]), y_train[batch]).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val_loss = F.cross_entropy(model(x_val), y_val).item()
    history.append(val_loss)
print("validation loss by epoch:", [round(v, 3) for v in history[::10]])
