# expect: labels-off-by-one
# source: https://github.com/milesial/Pytorch-UNet/issues/291
# Segmentation masks loaded as raw greyscale values (0 and 255, with anti-aliased edges) and fed to CrossEntropyLoss for n_classes=2: "IndexError: Target 192 is out of bounds".
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

rng = np.random.default_rng(0)


class BasicDataset(Dataset):
    def __init__(self, n=48, size=32):
        self.images, self.masks = [], []
        for _ in range(n):
            mask = np.zeros((size, size), dtype=np.uint8)
            r, c = rng.integers(4, 20, 2)
            mask[r:r + 10, c:c + 10] = 255
            mask[r - 1, c:c + 10] = 192  # anti-aliased border from the PNG
            img = mask / 255.0 + rng.normal(0, 0.3, (size, size))
            self.images.append(img.astype(np.float32)[None])
            self.masks.append(mask)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return {'image': torch.as_tensor(self.images[i]), 'mask': torch.as_tensor(self.masks[i]).long()}


n_classes = 2
net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, n_classes, 1))
optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-5, weight_decay=1e-8, momentum=0.9)
criterion = nn.CrossEntropyLoss()
train_loader = DataLoader(BasicDataset(), batch_size=4, shuffle=True)
for epoch in range(2):
    net.train()
    for batch in train_loader:
        images, true_masks = batch['image'], batch['mask']
        masks_pred = net(images)
        loss = criterion(masks_pred, true_masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
