import torch
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
d = load_digits()
x = torch.tensor(d.data, dtype=torch.float32) / 16.0
y = torch.tensor(d.target)
model = nn.Sequential(
    nn.Linear(64, 128),
    nn.ReLU(inplace=True),
    nn.Linear(128, 64),
    nn.ReLU(),
    nn.Linear(64, 10),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(3):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 64):
        idx = perm[i:i + 64]
        opt.zero_grad()
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
