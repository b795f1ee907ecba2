# expect: unnormalized-input (known miss)
# source: https://discuss.pytorch.org/t/neural-network-could-not-learn-on-this-type-of-data-why/96648
# Inputs 1..3999 and targets d**3 fed raw to a 1-50-1 ReLU net with Adam(1e-3): the net cannot learn the data.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Network(nn.Module):
    def __init__(self):
        super(Network, self).__init__()
        self.fc1 = nn.Linear(in_features=1, out_features=50, bias=True)
        self.fc2 = nn.Linear(in_features=50, out_features=1, bias=True)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return x


model = Network()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()

input = torch.tensor([x for x in range(1, 4000, 4)]).float()
target = torch.tensor([(d ** 3) for d in input]).float()
input = input.unsqueeze(1)
target = target.unsqueeze(1)

for epoch in range(200):
    optimizer.zero_grad()
    out = model(input)
    loss = criterion(out, target)
    loss.backward()
    optimizer.step()
    if epoch % 50 == 0:
        print('Epoch {}, loss {}, max. pred val {}'.format(epoch, loss.item(), out.max()))
