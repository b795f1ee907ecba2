# expect: zero-grad-missing
# source: https://github.com/Project-MONAI/research-contributions/issues/392
# A segmentation tutorial's train_epoch(): logits, loss, loss.backward(), optimizer.step() per batch with an AverageMeter, and no optimizer.zero_grad() anywhere.
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class BlobDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        label = torch.zeros(1, 24, 24)
        r, c = torch.randint(0, 16, (2,), generator=g).tolist()
        label[0, r:r + 8, c:c + 8] = 1
        image = label + 0.4 * torch.randn(1, 24, 24, generator=g)
        return {"image": image, "label": label}


model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
loader = DataLoader(BlobDataset(256), batch_size=8, shuffle=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-5)
loss_func = nn.BCEWithLogitsLoss()
batch_size = 8
max_epochs = 3


def train_epoch(model, loader, optimizer, epoch, loss_func):
    model.train()
    start_time = time.time()
    run_loss = AverageMeter()
    for idx, batch_data in enumerate(loader):
        data, target = batch_data["image"], batch_data["label"]
        logits = model(data)
        loss = loss_func(logits, target)
        loss.backward()
        optimizer.step()
        run_loss.update(loss.item(), n=batch_size)
        start_time = time.time()
    return run_loss.avg


for epoch in range(max_epochs):
    print(epoch, train_epoch(model, loader, optimizer, epoch, loss_func))
