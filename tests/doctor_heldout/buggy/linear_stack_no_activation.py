# expect: no-nonlinearity
# "Deep" nn.Sequential of Linear layers with no activation between them.
import torch
import torch.nn as nn
from sklearn.datasets import load_wine

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_wine()
X = torch.tensor(d.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(d.target)

model = nn.Sequential(
    nn.Linear(13, 64),
    nn.Linear(64, 64),
    nn.Linear(64, 3),
)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(40):
    for i in range(0, len(X), 32):
        optimizer.zero_grad()
        loss = criterion(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
print(loss.item())
