# A wide MLP on 150 digits (some labels wrong, as in hand-labelled data), with dropout, weight decay and early
# stopping on the validation loss (the best weights are kept).
import copy
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

model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 256), nn.ReLU(),
                      nn.Dropout(0.3), nn.Linear(256, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05)
history, best, best_state, patience = [], float("inf"), None, 2
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
    if val_loss < best:
        best, best_state, waited = val_loss, copy.deepcopy(model.state_dict()), 0
    else:
        waited += 1
        if waited >= patience:
            break
model.load_state_dict(best_state)
print("validation loss by epoch:", [round(v, 3) for v in history[::10]])
