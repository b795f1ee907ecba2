# The output layer is created inside forward(), so it is new (random, untrained, owned by no optimizer) on
# every call; only the hidden layer learns.
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 32)
    def forward(self, x):
        h = torch.relu(self.hidden(x))
        head = nn.Linear(32, 3)  # output layer made in forward
        return head(h)
torch.manual_seed(0)
x = torch.randn(512, 8)
y = (x[:, :3]).argmax(1)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for epoch in range(200):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    if epoch % 50 == 0:
        print(epoch, loss.item())
