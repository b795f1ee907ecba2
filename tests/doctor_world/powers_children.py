"""Trains in child processes: argv[1] is how they start (torch.multiprocessing.spawn, or multiprocessing's "fork"
or "spawn"); argv[2] "forget" makes child 1 never clear its gradients, "crash" makes it raise."""
import multiprocessing
import sys

import torch
import torch.nn.functional as F
from torch import nn


def train(rank: int, mode: str) -> None:
    torch.manual_seed(rank)
    net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    x, y = torch.randn(128, 8), torch.randint(0, 3, (128,))
    for step in range(40):
        if not (mode == "forget" and rank == 1):
            opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    if mode == "crash" and rank == 1:
        raise ValueError("child 1 stops")


if __name__ == "__main__":
    how, mode = sys.argv[1], sys.argv[2]
    if how == "torch":
        import torch.multiprocessing as mp

        mp.spawn(train, args=(mode,), nprocs=2)
    else:
        children = [multiprocessing.get_context(how).Process(target=train, args=(r, mode)) for r in range(2)]
        for child in children:
            child.start()
        for child in children:
            child.join()
        print("exit codes", [child.exitcode for child in children])
