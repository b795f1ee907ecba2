"""Digits through a small MLP, with the data shuffled in place before the split, once for the images and
once for the labels: np.random.shuffle draws a new order each call, so every image gets another digit's
label. The loss drifts down a little (the network memorizes) but stays at the level of guessing."""
import numpy as np
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, Dataset

np.random.seed(42)
torch.manual_seed(42)

images, digits = load_digits(return_X_y=True)
images = (images / 16.0).astype(np.float32)
np.random.shuffle(images)
np.random.shuffle(digits)


class Digits(Dataset):
    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y).long()

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[i], self.y[i]


train = DataLoader(Digits(images[:1500], digits[:1500]), batch_size=40, shuffle=True)
net = nn.Sequential(nn.Linear(64, 96), nn.ReLU(), nn.Linear(96, 10))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for epoch in range(10):
    running = 0.0
    for x, y in train:
        optimizer.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        optimizer.step()
        running += loss.item()
    print(f"epoch {epoch + 1}: mean loss {running / len(train):.3f}")

with torch.no_grad():
    guess = net(torch.from_numpy(images[1500:])).argmax(1).numpy()
print("held-out accuracy", (guess == digits[1500:]).mean())
