# expect: labels-off-by-one
# An argparse training script for the iris-like "species" column, coded 1, 2, 3 in the CSV.
import argparse

import torch
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    torch.manual_seed(0)
    features = torch.randn(90, 4)
    species = torch.randint(1, 4, (90,))  # as stored in the CSV: 1, 2, 3
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for x, y in zip(features, species):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x).unsqueeze(0), y.unsqueeze(0))
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
