# expect: dataloader-bottleneck
# "Training is really slow, GPU utilisation is low" - images decoded from bytes on every __getitem__.
import io
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class FolderDataset(Dataset):
    def __init__(self, n=240):
        rng = np.random.default_rng(0)
        self.blobs = []
        for _ in range(n):
            buf = io.BytesIO()
            np.save(buf, rng.integers(0, 255, (3, 32, 32), dtype=np.uint8))
            self.blobs.append(buf.getvalue())
        self.labels = rng.integers(0, 10, n)

    def __len__(self):
        return len(self.blobs)

    def __getitem__(self, i):
        img = np.load(io.BytesIO(self.blobs[i])).astype(np.float32) / 255.0
        time.sleep(0.004)  # stands in for JPEG decoding + augmentation
        return torch.from_numpy(img), int(self.labels[i])


loader = DataLoader(FolderDataset(), batch_size=8, shuffle=True)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for x, y in loader:
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
