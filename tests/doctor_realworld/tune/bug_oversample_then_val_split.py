# expect: split-leakage
# source: https://github.com/MakazhanAlpamys/Soup/issues/680
# Two data sources are interleaved with oversampling (the small one repeated to the size of the big one) and only then is val_split carved out at random, so the validation rows of the small source are copies of training rows.
import torch
import torch.nn as nn

torch.manual_seed(0)
big = torch.randn(2000, 24)
small = torch.randn(200, 24) + 1.0
big_y = (big[:, 0] > 0).long()
small_y = (small[:, 1] > 1).long() + 2

reps = len(big) // len(small)
X = torch.cat([big, small.repeat(reps, 1)])        # interleave strategy "over"
Y = torch.cat([big_y, small_y.repeat(reps)])
val_split = 0.1
perm = torch.randperm(len(X))
n_val = int(len(X) * val_split)
val_idx, train_idx = perm[:n_val], perm[n_val:]
x_train, y_train, x_val, y_val = X[train_idx], Y[train_idx], X[val_idx], Y[val_idx]

model = nn.Sequential(nn.Linear(24, 128), nn.ReLU(), nn.Linear(128, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(4):
    model.train()
    for i in range(0, len(x_train), 64):
        loss = nn.functional.cross_entropy(model(x_train[i:i + 64]), y_train[i:i + 64])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val_acc = (model(x_val).argmax(1) == y_val).float().mean().item()
    print(epoch, loss.item(), val_acc)
