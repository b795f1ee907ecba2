# expect: eval-mode-missing
# source: https://github.com/giotto-ai/giotto-deep/issues/40
# A Pipeline class computes validation accuracy under torch.no_grad() without model.eval(), so dropout stays active and the accuracy is understated and noisy.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(2400, 20)
y = (X[:, :5].sum(1) > 0).long()
train_loader = DataLoader(TensorDataset(X[:2000], y[:2000]), batch_size=64, shuffle=True)
val_loader = DataLoader(TensorDataset(X[2000:], y[2000:]), batch_size=100)


class Pipeline:
    def __init__(self, model, dataloaders, loss_fn):
        self.model = model
        self.dataloaders = dataloaders
        self.loss_fn = loss_fn

    def _train_loop(self, optimizer):
        self.model.train()
        for X, y in self.dataloaders[0]:
            loss = self.loss_fn(self.model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.item()

    def _val_loop(self):
        correct, size = 0, 0
        with torch.no_grad():
            for X, y in self.dataloaders[1]:
                pred = self.model(X)
                correct += (pred.argmax(1) == y).sum().item()
                size += len(y)
        return 100 * correct / size

    def train(self, optimizer, n_epochs=5):
        opt = optimizer(self.model.parameters(), lr=1e-3)
        for t in range(n_epochs):
            loss = self._train_loop(opt)
            print(f"epoch {t}: loss {loss:.3f}, val accuracy {self._val_loop():.1f}%")


model = nn.Sequential(nn.Linear(20, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 2))
Pipeline(model, (train_loader, val_loader), nn.CrossEntropyLoss()).train(torch.optim.Adam, n_epochs=5)
