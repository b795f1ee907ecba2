# doctor: --nproc 2
"""DDP training that saves from rank 0 only (and per-rank files for each process's own state)."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, 0] > 0).long()
dataset = TensorDataset(x, y)
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=16, sampler=sampler)
model = DDP(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
os.makedirs("checkpoints", exist_ok=True)

for epoch in range(2):
    sampler.set_epoch(epoch)
    for xb, yb in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    if rank == 0:
        torch.save({"epoch": epoch, "model": model.module.state_dict()}, "checkpoints/last.pt")
    torch.save(torch.get_rng_state(), f"checkpoints/rng_rank{rank}.pt")
    dist.barrier()
dist.destroy_process_group()
