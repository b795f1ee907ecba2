# doctor: --nproc 2
"""DDP training that writes its results file from every process: open(..., "w") on the same path."""
import json

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, 0] > 0).long()
dataset = TensorDataset(x, y)
sampler = DistributedSampler(dataset)
model = DDP(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
history = []

for epoch in range(2):
    sampler.set_epoch(epoch)
    for xb, yb in DataLoader(dataset, batch_size=16, sampler=sampler):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    history.append({"epoch": epoch, "loss": loss.item()})
    with open("history.json", "w") as f:
        json.dump(history, f)
dist.destroy_process_group()
