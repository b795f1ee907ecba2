# expect: graph-retained
# "Memory keeps going up during validation, training is fine" - a numpy table, a Dataset class, and a
# validation loop that calls model.eval() but not torch.no_grad(), summing the loss tensors.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

np.random.seed(4)
torch.manual_seed(4)
X_all = np.random.randn(1200, 20).astype("float32")
y_all = (X_all[:, :3].sum(axis=1) > 0).astype("int64")


class TableDS(Dataset):
    def __init__(self, X, y):
        self.X, self.y = X, y

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return torch.from_numpy(self.X[i]), torch.tensor(self.y[i])


train_dl = DataLoader(TableDS(X_all[:900], y_all[:900]), batch_size=50, shuffle=True)
valid_dl = DataLoader(TableDS(X_all[900:], y_all[900:]), batch_size=25)

net = nn.Sequential(nn.Linear(20, 40), nn.ReLU(), nn.Dropout(0.1), nn.Linear(40, 2))
loss_func = nn.CrossEntropyLoss()
opt = torch.optim.Adam(net.parameters(), 1e-3)

for ep in range(4):
    net.train()
    for xb, yb in train_dl:
        loss = loss_func(net(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()

    net.eval()
    valid_loss = 0
    for xb, yb in valid_dl:
        valid_loss += loss_func(net(xb), yb)
    print(ep, valid_loss.item() / len(valid_dl))
