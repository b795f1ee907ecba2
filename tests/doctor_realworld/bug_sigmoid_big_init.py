# expect: saturated-activations
# Hand-rolled init "to break symmetry": weights drawn with std 5, sigmoid hidden layers.
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 64)
        self.out = nn.Linear(64, 1)
        for layer in (self.fc1, self.fc2):
            nn.init.normal_(layer.weight, std=5.0)

    def forward(self, x):
        x = torch.sigmoid(self.fc1(x))
        x = torch.sigmoid(self.fc2(x))
        return self.out(x)


torch.manual_seed(0)
X = torch.randn(400, 20)
y = X[:, :3].sum(1, keepdim=True)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for epoch in range(30):
    for i in range(0, 400, 50):
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(X[i:i + 50]), y[i:i + 50])
        loss.backward()
        opt.step()
