# The guide's loop: custom Dataset, DataLoader, CNN with BN + dropout, train()/eval() each epoch,
# a ReduceLROnPlateau scheduler, and early stopping bookkeeping with .item().
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Digits(Dataset):
    def __init__(self, split):
        d = load_digits()
        x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1)
        x = (x - 4.9) / 6.0
        idx = slice(0, 1400) if split == "train" else slice(1400, None)
        self.x, self.y = x[idx], torch.tensor(d.target)[idx]

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.MaxPool2d(2))
        self.fc = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(32 * 4 * 4, 10))

    def forward(self, x):
        return self.fc(self.conv(x))


torch.manual_seed(0)
train = DataLoader(Digits("train"), batch_size=64, shuffle=True)
val = DataLoader(Digits("val"), batch_size=128)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
best = float("inf")
for epoch in range(4):
    model.train()
    for xb, yb in train:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    model.eval()
    total = 0.0
    with torch.no_grad():
        for xb, yb in val:
            total += nn.functional.cross_entropy(model(xb), yb, reduction="sum").item()
    val_loss = total / len(val.dataset)
    sched.step(val_loss)
    best = min(best, val_loss)
print(f"best val loss {best:.3f}")
