# expect: none
# argparse + notebook leftovers: a tiny CNN on random 1x16x16 images, two epochs.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=16)
p.add_argument("--epochs", type=int, default=2)
args = p.parse_args()

torch.manual_seed(0)
images = torch.randn(96, 1, 16, 16)
labels = (images.mean(dim=(1, 2, 3)) > 0).long()


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


net = SmallCNN()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
for epoch in range(args.epochs):
    perm = torch.randperm(len(images))
    for i in range(0, len(images), args.batch_size):
        idx = perm[i:i + args.batch_size]
        optimizer.zero_grad()
        F.cross_entropy(net(images[idx]), labels[idx]).backward()
        optimizer.step()
