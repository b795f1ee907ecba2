"""A plain PyTorch DDP script: scikit-learn's digits, each process training on its share.

    torchrun --nproc-per-node 2 examples/train_ddp.py
    trainwell doctor run --nproc 2 examples/train_ddp.py     # the same, watched: one report for both ranks
"""
import torch
import torch.distributed as dist
from sklearn.datasets import load_digits
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)

digits = load_digits()
images = torch.tensor(digits.data, dtype=torch.float32) / 16.0
labels = torch.tensor(digits.target)
train = TensorDataset(images[:1500], labels[:1500])
val_x, val_y = images[1500:], labels[1500:]

sampler = DistributedSampler(train, shuffle=True, seed=0)  # each rank reads its own share
loader = DataLoader(train, batch_size=32, sampler=sampler)
net = DistributedDataParallel(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)

for epoch in range(3):
    sampler.set_epoch(epoch)  # a new order every epoch
    net.train()
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(xb), yb)
        loss.backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        accuracy = (net(val_x).argmax(1) == val_y).float().mean().item()
    if rank == 0:
        print(f"epoch {epoch}: loss {loss.item():.3f}, validation accuracy {accuracy:.3f}")
dist.destroy_process_group()
