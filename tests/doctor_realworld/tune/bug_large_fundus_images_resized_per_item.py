# expect: dataloader-bottleneck
# source: https://github.com/YijinHuang/pytorch-DR/issues/1
# Diabetic-retinopathy training from an ImageFolder of very large pictures: every __getitem__ decodes and resizes a big image in the main process (no num_workers), so the GPU sits at 0% utilisation.
import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset

rng = np.random.default_rng(0)


class FundusFolder(Dataset):
    def __init__(self, n=64, size=1100):
        self.size = size
        self.labels = rng.integers(0, 2, n)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        raw = np.random.default_rng(i).integers(0, 255, (self.size, self.size, 3), dtype=np.uint8)  # "decode" the JPEG
        img = Image.fromarray(raw).resize((64, 64), Image.BILINEAR)
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1)
        return (x - 0.5) / 0.25, int(self.labels[i])


train_loader = DataLoader(FundusFolder(), batch_size=16, shuffle=True)
net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    for X, y in train_loader:
        loss = criterion(net(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
