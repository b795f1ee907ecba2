# expect: zero-grad-misplaced
# Multi-task training: each task loss is back-propagated separately, but zero_grad() sits inside
# the per-task loop, so each backward wipes the previous task's gradients and the single step()
# only ever sees the last task ("parity"). The digit head never learns.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
from sklearn.datasets import load_digits

torch.manual_seed(1)
torch.set_num_threads(1)


class DigitsDict(Dataset):
    def __init__(self, images, labels):
        self.images = torch.tensor(images / 16.0, dtype=torch.float32)
        self.labels = torch.tensor(labels)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        y = self.labels[i]
        return {"pixels": self.images[i], "digit": y, "parity": (y % 2).float()}


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(64, 96), nn.ReLU(), nn.Linear(96, 96), nn.ReLU())
        self.digit_head = nn.Linear(96, 10)
        self.parity_head = nn.Linear(96, 1)

    def forward(self, x):
        h = self.trunk(x)
        return {"digit": self.digit_head(h), "parity": self.parity_head(h).squeeze(-1)}


d = load_digits()
train_set, val_set = DigitsDict(d.data[:1400], d.target[:1400]), DigitsDict(d.data[1400:], d.target[1400:])
loader = DataLoader(train_set, batch_size=32, shuffle=True)
mt = TwoHeads()
opt = torch.optim.Adam(mt.parameters(), lr=1e-3)
task_losses = {
    "digit": lambda out, batch: F.cross_entropy(out["digit"], batch["digit"]),
    "parity": lambda out, batch: F.binary_cross_entropy_with_logits(out["parity"], batch["parity"]),
}

for epoch in range(8):
    mt.train()
    for batch in loader:
        out = mt(batch["pixels"])
        for name, fn in task_losses.items():
            opt.zero_grad()
            fn(out, batch).backward(retain_graph=True)
        opt.step()
    mt.eval()
    with torch.no_grad():
        out = mt(val_set.images)
        digit_acc = (out["digit"].argmax(1) == val_set.labels).float().mean().item()
        par_acc = ((out["parity"] > 0).long() == val_set.labels % 2).float().mean().item()
    print(f"epoch {epoch}: digit acc {digit_acc:.3f}  parity acc {par_acc:.3f}")
