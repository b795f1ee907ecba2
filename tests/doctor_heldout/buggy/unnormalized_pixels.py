# expect: unnormalized-input
# uint8 images converted with .float() but never divided by 255.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

torch.set_num_threads(1)
torch.manual_seed(0)
rng = np.random.default_rng(0)

images = rng.integers(0, 256, size=(1000, 12, 12), dtype=np.uint8)
labels = (images[:, :6].mean(axis=(1, 2)) > images[:, 6:].mean(axis=(1, 2))).astype(np.int64)


class ImageDataset(Dataset):
    def __init__(self, imgs, labels):
        self.imgs, self.labels = imgs, labels

    def __len__(self):
        return len(self.imgs)

    def __getitem__(self, i):
        img = torch.from_numpy(self.imgs[i]).float().unsqueeze(0)   # 0..255
        return img, int(self.labels[i])


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
        self.fc = nn.Linear(8 * 10 * 10, 2)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).flatten(1))


loader = DataLoader(ImageDataset(images, labels), batch_size=50, shuffle=True)
model = SmallCNN()
opt = torch.optim.SGD(model.parameters(), lr=1e-5)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    print(epoch, loss.item())
