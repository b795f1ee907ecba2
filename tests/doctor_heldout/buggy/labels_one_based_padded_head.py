# expect: labels-off-by-one
# Labels 1..10 from a file; the user "fixed" the crash by giving the head 11 outputs.
# Trains, but output 0 is a ghost class and argmax predictions are shifted vs. the 0-based eval.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
X = torch.tensor(d.data / 16.0, dtype=torch.float32)
y = torch.tensor(d.target + 1)          # labels as stored in the CSV: 1..10

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, int(y.max()) + 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(4):
    perm = torch.randperm(len(X))
    for i in range(0, len(X), 64):
        idx = perm[i:i + 64]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
