# doctor: --nproc 2
"""DDP with a shuffling DistributedSampler, but sampler.set_epoch(epoch) is never called."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Points(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(192, 6, generator=g)
        self.y = (self.x[:, 1] > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


dist.init_process_group("gloo")
rank = int(os.environ["RANK"])
torch.manual_seed(0)
dataset = Points()
loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset, shuffle=True))
model = DDP(nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 2)))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()

for epoch in range(3):
    model.train()
    for xb, yb in loader:
        optimizer.zero_grad()
        criterion(model(xb), yb).backward()
        optimizer.step()
dist.destroy_process_group()
