# expect: no-nonlinearity
# source: https://github.com/soumith/cvpr2015/issues/6
# The 60-minute-blitz LeNet-5 imitation stacks Linear(16*5*5, 120) -> Linear(120, 84) -> Linear(84, 10) with no nonlinearity between them (written here in PyTorch).
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(
    nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
    nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
    nn.Flatten(),
    nn.Linear(16 * 5 * 5, 120),
    nn.Linear(120, 84),
    nn.Linear(84, 10),
)
templates = torch.randn(10, 3, 32, 32)
labels = torch.randint(0, 10, (600,))
images = templates[labels] + torch.randn(600, 3, 32, 32)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
for epoch in range(2):
    for i in range(0, 600, 20):
        optimizer.zero_grad()
        loss = criterion(net(images[i:i + 20]), labels[i:i + 20])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
