# expect: cuda-unavailable
# Written on a GPU workstation: the device defaults to "cuda:0" with no availability check, and
# the script is run on a CPU-only machine. Crashes when the model is moved.
import argparse
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import make_moons

p = argparse.ArgumentParser(description="moons classifier")
p.add_argument("--device", default="cuda:0")
p.add_argument("--epochs", type=int, default=20)
p.add_argument("--lr", type=float, default=1e-2)
cfg = p.parse_args()

torch.manual_seed(0)
torch.set_num_threads(1)
device = torch.device(cfg.device)

X, y = make_moons(n_samples=800, noise=0.2, random_state=0)
dl = DataLoader(TensorDataset(torch.tensor(X, dtype=torch.float32), torch.tensor(y)), batch_size=64, shuffle=True)

net = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
for ep in range(cfg.epochs):
    for xb, yb in dl:
        xb, yb = xb.to(device), yb.to(device)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(xb), yb)
        loss.backward()
        opt.step()
    if ep % 5 == 0:
        print(f"epoch {ep}: loss {loss.item():.4f}")
