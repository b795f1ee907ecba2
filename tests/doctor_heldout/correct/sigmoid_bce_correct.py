# expect: none
# Model ending in nn.Sigmoid trained with nn.BCELoss (probabilities into the loss that expects them).
import torch
import torch.nn as nn
from sklearn.datasets import load_breast_cancer

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_breast_cancer()
X = torch.tensor(d.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(d.target, dtype=torch.float32).unsqueeze(1)
model = nn.Sequential(nn.Linear(30, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
crit = nn.BCELoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(20):
    for i in range(0, len(X), 64):
        opt.zero_grad()
        loss = crit(model(X[i:i + 64]), y[i:i + 64])
        loss.backward()
        opt.step()
print(loss.item())
