# A small CNN on the 8x8 digits (custom Dataset + DataLoader): the two convolutions have no
# activation between them.
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class DigitImages(Dataset):
    def __init__(self) -> None:
        d = load_digits()
        self.x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
        self.y = torch.tensor(d.target)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        return self.x[i], self.y[i]


model = nn.Sequential(
    nn.Conv2d(1, 16, 3, padding=1),
    nn.Conv2d(16, 32, 3, padding=1),  # bug: no activation after the first conv
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Flatten(),
    nn.Linear(32 * 4 * 4, 10),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(DigitImages(), batch_size=64, shuffle=True)

for epoch in range(2):
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
