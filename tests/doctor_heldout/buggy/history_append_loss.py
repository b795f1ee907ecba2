# expect: graph-retained
# history.append(loss) keeps every step's autograd graph alive.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


X = torch.randn(2000, 32)
y = X[:, :4].sum(1, keepdim=True)
loader = DataLoader(TensorDataset(X, y), batch_size=20, shuffle=True)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
history = []
for epoch in range(2):
    for batch_idx, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        history.append(loss)
    print("epoch", epoch, "mean loss", sum(history[-100:]) / 100)
