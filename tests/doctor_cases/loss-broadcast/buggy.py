# Disease progression from ten blood measurements, one batch of every patient per step:
# the network ends in one output unit, so its predictions are a column (N, 1) while the targets are (N,).
import torch
from sklearn.datasets import load_diabetes
from torch import nn

torch.manual_seed(1)
data = load_diabetes()
features = torch.tensor(data.data, dtype=torch.float32)
features = (features - features.mean(0)) / features.std(0)
progression = torch.tensor(data.target, dtype=torch.float32)
progression = (progression - progression.mean()) / progression.std()

net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
for it in range(150):
    optimizer.zero_grad()
    loss = criterion(net(features), progression)
    loss.backward()
    optimizer.step()
print(f"mse {loss.item():.3f}")
