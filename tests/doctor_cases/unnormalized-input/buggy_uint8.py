# uint8 images converted with .float() but never divided by 255, fed to a small CNN.
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    """16x16 grayscale uint8 images: a bright square top-left (class 0) or bottom-right (class 1)."""

    def __init__(self, n=512):
        g = torch.Generator().manual_seed(0)
        self.y = torch.randint(0, 2, (n,), generator=g)
        imgs = torch.randint(0, 60, (n, 1, 16, 16), generator=g, dtype=torch.uint8)
        for i, c in enumerate(self.y.tolist()):
            r = 2 if c == 0 else 9
            imgs[i, 0, r:r + 5, r:r + 5] = 230
        self.imgs = imgs

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.imgs[i].float(), self.y[i]  # 0..255


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 8 * 8, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))


torch.manual_seed(0)
model = SmallCNN()
opt = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)
for epoch in range(2):
    for xb, yb in DataLoader(Squares(), batch_size=32, shuffle=True):
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
print("loss", loss.item())
