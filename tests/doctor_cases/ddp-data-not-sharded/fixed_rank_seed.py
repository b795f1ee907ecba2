# doctor: --nproc 2
"""Two-process DDP on the digits, each rank seeded with its rank (for its own dropout masks and the like),
and a DistributedSampler that gives each rank its own half of the images every epoch."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(100 + rank)

digits = load_digits()
images = torch.tensor(digits.data, dtype=torch.float32) / 16.0
targets = torch.tensor(digits.target)
train = TensorDataset(images[:1400], targets[:1400])
held_out = TensorDataset(images[1400:], targets[1400:])

net = DistributedDataParallel(nn.Sequential(nn.Linear(64, 48), nn.Tanh(), nn.Linear(48, 10)))
opt = torch.optim.Adam(net.parameters(), lr=2e-3)

shares = DistributedSampler(train, shuffle=True, seed=7)
for epoch in range(3):
    shares.set_epoch(epoch)
    net.train()
    for inputs, labels in DataLoader(train, batch_size=25, sampler=shares):
        opt.zero_grad()
        F.cross_entropy(net(inputs), labels).backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        hits = sum((net(a).argmax(1) == b).sum().item() for a, b in DataLoader(held_out, batch_size=100))
    if rank == 0:
        print(f"epoch {epoch}: held-out accuracy {hits / len(held_out):.3f}", flush=True)

dist.destroy_process_group()
