# The 8-bit images converted to floats in [0, 1] and standardised in the Dataset.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Pictures(Dataset):
    def __init__(self, n: int = 256) -> None:
        g = torch.Generator().manual_seed(0)
        self.images = torch.randint(0, 256, (n, 3, 16, 16), dtype=torch.uint8, generator=g)
        self.labels = (self.images.float().mean((1, 2, 3)) > 127.5).long()

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        return (self.images[i].float() / 255 - 0.5) / 0.29, self.labels[i]


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    for images, labels in DataLoader(Pictures(), batch_size=32, shuffle=True):
        opt.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        opt.step()
print("done", loss.item())
