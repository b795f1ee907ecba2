# expect: none
# Digits images with random shifts and noise applied in the Dataset.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)


class AugDigits(Dataset):
    def __init__(self, train=True):
        d = load_digits()
        self.x = torch.tensor(d.images / 16.0, dtype=torch.float32)
        self.y = torch.tensor(d.target)
        self.train = train

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        img = self.x[i]
        if self.train:
            dx, dy = torch.randint(-1, 2, (2,)).tolist()
            img = torch.roll(img, shifts=(dx, dy), dims=(0, 1))
            img = (img + 0.05 * torch.randn_like(img)).clamp(0, 1)
        return (img.unsqueeze(0) - 0.3) / 0.4, self.y[i]


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        return self.fc(x.flatten(1))


loader = DataLoader(AugDigits(), batch_size=64, shuffle=True)
model = CNN()
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    print(epoch, loss.item())
