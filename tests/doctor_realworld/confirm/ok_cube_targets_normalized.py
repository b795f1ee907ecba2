# expect: none
# source: https://discuss.pytorch.org/t/neural-network-could-not-learn-on-this-type-of-data-why/96648
# The answer's fix to "could not learn on this type of data": standardize the input and the d**3 target, train, then un-normalize the predictions.
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

input = torch.arange(1, 4000, 4).float().unsqueeze(1)
target = input ** 3

input_mean, input_std = input.mean(), input.std()
input = (input - input_mean) / input_std
target_mean, target_std = target.mean(), target.std()
target_norm = (target - target_mean) / target_std

for epoch in range(400):
    optimizer.zero_grad()
    out = model(input)
    loss = criterion(out, target_norm)
    loss.backward()
    optimizer.step()
    if epoch % 100 == 0:
        print('Epoch {}, loss {}'.format(epoch, loss.item()))

with torch.no_grad():
    pred = model(input) * target_std + target_mean
print(pred[-1].item(), 3999 ** 3)
