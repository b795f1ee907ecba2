# expect: overfitting
# 120 noisy training points, a 2x256 MLP, no regularisation, 400 full-batch Adam epochs and no
# early stopping: training loss goes to ~0 while validation loss climbs for hundreds of epochs.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

torch.manual_seed(0)
torch.set_num_threads(1)

X, y = make_classification(n_samples=620, n_features=25, n_informative=5, n_redundant=0,
                           flip_y=0.15, class_sep=0.9, random_state=21)
X = StandardScaler().fit_transform(X)
X = torch.tensor(X, dtype=torch.float32)
y = torch.tensor(y, dtype=torch.float32)
x_train, y_train = X[:120], y[:120]
x_val, y_val = X[120:], y[120:]

net = nn.Sequential(nn.Linear(25, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)

for epoch in range(400):
    net.train()
    opt.zero_grad()
    train_loss = F.binary_cross_entropy_with_logits(net(x_train).squeeze(1), y_train)
    train_loss.backward()
    opt.step()
    net.eval()
    with torch.no_grad():
        logits = net(x_val).squeeze(1)
        val_loss = F.binary_cross_entropy_with_logits(logits, y_val)
        val_acc = ((logits > 0).float() == y_val).float().mean()
    if epoch % 40 == 0 or epoch == 399:
        print(f"epoch {epoch:3d}  train {train_loss.item():.4f}  val {val_loss.item():.4f}  val acc {val_acc.item():.3f}")
