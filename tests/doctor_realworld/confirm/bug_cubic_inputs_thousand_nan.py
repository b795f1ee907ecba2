# expect: unnormalized-input (known miss)
# source: https://qa.1r1g.com/sf/ask/4433342651
# "Is normalization needed for regression?" y = 2X^3 + 7X^2 - 8X + 120 with X from -1000 to 1000, nn.Linear(1, 1), MSELoss and SGD: the loss is NaN without a MinMaxScaler.
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
x = np.sort(rng.uniform(-1000, 1000, 100)).reshape(-1, 1)
dataset = np.hstack([x, 2 * x ** 3 + 7 * x ** 2 - 8 * x + 120])
rng.shuffle(dataset)

x_temp_train = dataset[:79, :-1]
y_temp_train = dataset[:79, -1:]
x_temp_test = dataset[80:, :-1]
y_temp_test = dataset[80:, -1:]

X_train = torch.FloatTensor(x_temp_train)
Y_train = torch.FloatTensor(y_temp_train)
X_test = torch.FloatTensor(x_temp_test)
Y_test = torch.FloatTensor(y_temp_test)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.linear = nn.Linear(1, 1)

    def forward(self, x):
        x = self.linear(x)
        return x


net = Net()
print(net)
optimizer = torch.optim.SGD(net.parameters(), lr=0.2)
loss_func = nn.MSELoss()

for t in range(500):
    prediction = net(X_train)
    loss = loss_func(prediction, Y_train)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if t % 100 == 0:
        print(t, loss.item())
