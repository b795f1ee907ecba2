# doctor: --nproc 2
"""A small CNN with BatchNorm under DDP, a global batch of 8: each process normalizes 4 images."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
torch.manual_seed(0)
images = torch.randn(128, 1, 12, 12)
labels = (images.mean(dim=(1, 2, 3)) > 0).long()
dataset = TensorDataset(images, labels)
sampler = DistributedSampler(dataset)
global_batch = 8
loader = DataLoader(dataset, batch_size=global_batch // dist.get_world_size(), sampler=sampler)
net = nn.Sequential(nn.Conv2d(1, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                    nn.Linear(8, 2))
model = DDP(net)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(1):
    sampler.set_epoch(epoch)
    model.train()
    for xb, yb in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
dist.destroy_process_group()
