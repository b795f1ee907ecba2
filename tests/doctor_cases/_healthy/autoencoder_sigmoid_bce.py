# An autoencoder on pixels in [0, 1]: sigmoid output with BCELoss (correct), plus an SGD
# optimizer stepping every batch with nesterov momentum.
import torch
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
x = torch.tensor(load_digits().data, dtype=torch.float32) / 16.0
model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8), nn.ReLU(),
                      nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 64), nn.Sigmoid())
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9, nesterov=True)
for epoch in range(6):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 64):
        xb = x[perm[i:i + 64]]
        loss = nn.BCELoss()(model(xb), xb)
        opt.zero_grad()
        loss.backward()
        opt.step()
print(f"reconstruction bce {loss.item():.3f}")
