# An ImageFolder-style dataset: samples listed folder by folder (one folder per class), read without shuffling.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
CLASSES = ["cat", "dog", "frog", "ship"]


class FolderDataset(Dataset):
    def __init__(self, per_class=160):
        self.items = []  # (image, label), walked class folder by class folder
        for label, _name in enumerate(CLASSES):
            centre = torch.randn(3, 8, 8)
            for _ in range(per_class):
                self.items.append((centre + 0.8 * torch.randn(3, 8, 8), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


loader = DataLoader(FolderDataset(), batch_size=32)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, len(CLASSES)))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(3):
    for images, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: last batch loss {loss.item():.3f}")
