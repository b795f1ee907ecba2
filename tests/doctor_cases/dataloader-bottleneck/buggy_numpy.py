# Images are built and augmented with NumPy inside __getitem__ on every access (upsampling,
# blurring, random crop), so every epoch repeats the heavy per-item work in the training process.
import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
rng = np.random.default_rng(0)
digits = load_digits()


class DigitsAugmented(Dataset):
    def __len__(self) -> int:
        return 640

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        img = np.kron(digits.images[i], np.ones((8, 8))) / 16.0  # 64x64 "decoded" image
        for _ in range(30):  # blur
            img = (img + np.roll(img, 1, 0) + np.roll(img, -1, 0) + np.roll(img, 1, 1) + np.roll(img, -1, 1)) / 5
        img = np.fft.ifft2(np.fft.fft2(img) * np.exp(-0.001 * np.arange(64) ** 2)).real  # low-pass
        top, left = rng.integers(0, 8, 2)
        crop = img[top:top + 56, left:left + 56].astype(np.float32)
        return torch.from_numpy(crop[::7, ::7].copy()).unsqueeze(0), int(digits.target[i])


loader = DataLoader(DigitsAugmented(), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for images, labels in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
