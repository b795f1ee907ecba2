# expect: labels-off-by-one
# source: https://github.com/pytorch/pytorch/issues/15666
# A home-made CIFAR-10 variant labels its classes 1..10 instead of 0..9; CrossEntropyLoss over a 10-way head fails on the label 10 (an assertion on CUDA, "Target 10 is out of bounds" on CPU).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class MyCIFAR10(Dataset):
    def __init__(self, n=640):
        self.data = torch.randn(n, 3, 32, 32)
        self.targets = torch.randint(1, 11, (n,))  # classes numbered 1..10

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return self.data[i], self.targets[i]


model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 8 * 8, 10),
)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for inputs, labels in DataLoader(MyCIFAR10(), batch_size=32, shuffle=True):
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
