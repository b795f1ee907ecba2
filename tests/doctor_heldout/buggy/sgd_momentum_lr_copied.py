# expect: lr-too-high
# lr=0.5 copied from a plain-SGD recipe, but the optimizer here uses momentum=0.9 (effective step
# ~10x larger); a good rate for this setup is ~0.05. The loss jumps up and stays at chance level.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

torch.manual_seed(0)
torch.set_num_threads(1)


class Trainer:
    def __init__(self, net, lr, momentum, batch_size=32):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum, nesterov=True)
        self.bs = batch_size
        self.history = []

    def train_epoch(self, X, y):
        self.net.train()
        perm = torch.randperm(len(X))
        tot = 0.0
        for i in range(0, len(X), self.bs):
            b = perm[i:i + self.bs]
            self.opt.zero_grad()
            loss = F.cross_entropy(self.net(X[b]), y[b])
            loss.backward()
            self.opt.step()
            tot += loss.item() * len(b)
        return tot / len(X)

    @torch.inference_mode()
    def score(self, X, y):
        self.net.eval()
        return (self.net(X).argmax(1) == y).float().mean().item()

    def fit(self, X, y, Xv, yv, epochs):
        for e in range(epochs):
            tr = self.train_epoch(X, y)
            self.history.append(tr)
            print(f"[{e + 1}/{epochs}] train_loss={tr:.4f} val_acc={self.score(Xv, yv):.3f}")


X, y = load_digits(return_X_y=True)
Xtr, Xva, ytr, yva = train_test_split(X / 16.0, y, test_size=0.2, random_state=42)
Xtr, Xva = torch.tensor(Xtr, dtype=torch.float32), torch.tensor(Xva, dtype=torch.float32)
ytr, yva = torch.tensor(ytr), torch.tensor(yva)

net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
Trainer(net, lr=0.5, momentum=0.9).fit(Xtr, ytr, Xva, yva, epochs=6)
