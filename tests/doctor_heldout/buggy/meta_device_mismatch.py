# expect: device-mismatch
# Model built under torch.device("meta") (copied from a big-model loading recipe) and never
# materialized; the CPU batch meets meta weights. Crashes.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 20)
        self.fc2 = nn.Linear(20, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


with torch.device("meta"):
    model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(100, 10)
y = (X[:, 0] > 0).long()
for i in range(0, 100, 20):
    opt.zero_grad()
    loss = F.cross_entropy(model(X[i:i + 20]), y[i:i + 20])
    loss.backward()
    opt.step()
