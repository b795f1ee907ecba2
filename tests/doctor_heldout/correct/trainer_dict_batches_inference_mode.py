# expect: none
# 自定义训练类：batch 是字典，验证用 torch.inference_mode()，验证后切回 train()。
# (A custom trainer: dict batches, Dropout + BatchNorm, eval()/train() switched correctly.)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

torch.manual_seed(0)
torch.set_num_threads(1)


class WineSet(Dataset):
    def __init__(self, x, y):
        self.x = torch.tensor(x, dtype=torch.float32)
        self.y = torch.tensor(y)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"features": self.x[i], "label": self.y[i]}


class Learner:
    def __init__(self, net, lr=2e-3):
        self.net = net
        self.opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-2)

    def step(self, batch):
        logits = self.net(batch["features"])
        loss = F.cross_entropy(logits, batch["label"])
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss.item()

    def evaluate(self, loader):
        self.net.eval()
        hits = total = 0
        with torch.inference_mode():
            for batch in loader:
                hits += (self.net(batch["features"]).argmax(-1) == batch["label"]).sum().item()
                total += len(batch["label"])
        self.net.train()
        return hits / total

    def fit(self, train_loader, val_loader, epochs):
        self.net.train()
        for ep in range(epochs):
            losses = [self.step(b) for b in train_loader]
            if ep % 5 == 4:
                print(f"epoch {ep + 1}: 训练损失 {sum(losses) / len(losses):.4f}  验证准确率 {self.evaluate(val_loader):.3f}")


X, y = load_wine(return_X_y=True)
Xtr, Xva, ytr, yva = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
sc = StandardScaler().fit(Xtr)
train_loader = DataLoader(WineSet(sc.transform(Xtr), ytr), batch_size=16, shuffle=True, drop_last=True)
val_loader = DataLoader(WineSet(sc.transform(Xva), yva), batch_size=64)

net = nn.Sequential(nn.Linear(13, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 3))
Learner(net).fit(train_loader, val_loader, epochs=20)
