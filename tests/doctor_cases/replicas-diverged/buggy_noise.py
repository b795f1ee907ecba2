# doctor: --nproc 2
"""DDP, but after each step every process perturbs its own weights with its own noise."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, 0] - x[:, 1] > 0).long()
dataset = TensorDataset(x, y)
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=16, sampler=sampler)
model = DistributedDataParallel(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
torch.manual_seed(100 + rank)  # "different augmentation per rank"

for epoch in range(2):
    sampler.set_epoch(epoch)
    for xb, yb in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
        with torch.no_grad():  # weight noise as a regularizer
            for p in model.parameters():
                p.add_(torch.randn_like(p) * 1e-3)
dist.destroy_process_group()
