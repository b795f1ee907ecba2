# expect: none
# source: https://github.com/pytorch/examples/blob/main/mnist/main.py
# The official MNIST example's shape: conv net with dropout and log_softmax, F.nll_loss, Adadelta(lr=1.0) with StepLR(gamma=0.7), test() under model.eval() and torch.no_grad().
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)
strokes = torch.rand(10, 1, 28, 28)
y_all = torch.randint(0, 10, (2400,))
x_all = ((strokes[y_all] + 0.6 * torch.rand(2400, 1, 28, 28)).clamp(0, 1) - 0.1307) / 0.3081
train_loader = DataLoader(TensorDataset(x_all[:2000], y_all[:2000]), batch_size=64, shuffle=True)
test_loader = DataLoader(TensorDataset(x_all[2000:], y_all[2000:]), batch_size=1000)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(2304, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.dropout2(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


def train(model, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()


def test(model, test_loader):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            correct += output.argmax(dim=1).eq(target).sum().item()
    print('Test set: Average loss: {:.4f}, Accuracy: {}/{}'.format(test_loss / 400, correct, 400))


model = Net()
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 3):
    train(model, train_loader, optimizer, epoch)
    test(model, test_loader)
    scheduler.step()
