# expect: zero-grad-missing
# source: https://github.com/heartcored98/Standalone-DeepLearning/issues/11
# CIFAR-10-style CNN lab: optimizer.zero_grad() is called once per epoch, outside the batch loop, so gradients pile up over every batch of the epoch.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = torch.randn(1024, 3, 16, 16)
templates = torch.randn(10, 3, 16, 16)
labels = torch.randint(0, 10, (1024,))
images = 0.7 * images + templates[labels]
trainloader = DataLoader(TensorDataset(images, labels), batch_size=64, shuffle=True)


class CNN(nn.Module):
    def __init__(self):
        super(CNN, self).__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 32 * 4 * 4)
        return self.fc2(F.relu(self.fc1(x)))


net = CNN()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for epoch in range(4):
    net.train()
    optimizer.zero_grad()
    train_loss = 0.0
    for i, (inputs, targets) in enumerate(trainloader):
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
    print(epoch, train_loss / len(trainloader))
