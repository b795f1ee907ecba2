# expect: none
# SGD + Nesterov with a OneCycle schedule peaking at lr=0.4 on a BatchNorm MLP: a high peak rate
# that is fine because of the warmup and the normalisation layers.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

torch.manual_seed(0)
torch.set_num_threads(1)

X, y = load_digits(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(X / 16.0, y, test_size=0.25, random_state=7)
loader = DataLoader(TensorDataset(torch.tensor(Xtr, dtype=torch.float32), torch.tensor(ytr)),
                    batch_size=64, shuffle=True, drop_last=True)
Xte, yte = torch.tensor(Xte, dtype=torch.float32), torch.tensor(yte)

net = nn.Sequential(
    nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(),
    nn.Linear(128, 128), nn.BatchNorm1d(128), nn.ReLU(),
    nn.Linear(128, 10),
)
EPOCHS = 6
opt = torch.optim.SGD(net.parameters(), lr=0.4, momentum=0.9, nesterov=True, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.4, epochs=EPOCHS, steps_per_epoch=len(loader),
                                            pct_start=0.3)

for epoch in range(EPOCHS):
    net.train()
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(net(xb), yb)
        loss.backward()
        opt.step()
        sched.step()
    net.eval()
    with torch.no_grad():
        acc = (net(Xte).argmax(1) == yte).float().mean().item()
    print(f"epoch {epoch}: lr {sched.get_last_lr()[0]:.4f}  loss {loss.item():.4f}  test acc {acc:.3f}")
