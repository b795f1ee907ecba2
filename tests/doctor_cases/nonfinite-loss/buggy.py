# Cross-entropy written by hand: -(onehot * log(softmax)). Once a probability underflows to exactly 0,
# 0 * log(0) = 0 * -inf = NaN.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
X = torch.tensor(digits.data, dtype=torch.float32)  # 0..16
Y = F.one_hot(torch.tensor(digits.target), 10).float()
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.2)
for epoch in range(3):
    perm = torch.randperm(len(X))
    for i in range(0, len(X), 64):
        idx = perm[i:i + 64]
        probs = torch.softmax(model(X[idx]), dim=1)
        loss = -(Y[idx] * torch.log(probs)).sum(dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
print("loss", loss.item())
