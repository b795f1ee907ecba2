# expect: vanishing-gradients
# A 12-layer MLP with sigmoid activations.
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)


class DeepSigmoidNet(nn.Module):
    def __init__(self, depth=12, width=64):
        super().__init__()
        layers = [nn.Linear(64, width), nn.Sigmoid()]
        for _ in range(depth - 2):
            layers += [nn.Linear(width, width), nn.Sigmoid()]
        layers.append(nn.Linear(width, 10))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


d = load_digits()
X = torch.tensor(d.data / 16.0, dtype=torch.float32)
y = torch.tensor(d.target)
model = DeepSigmoidNet()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
crit = nn.CrossEntropyLoss()
for epoch in range(3):
    for i in range(0, len(X), 32):
        opt.zero_grad()
        loss = crit(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        opt.step()
    print(epoch, loss.item())
