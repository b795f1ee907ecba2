# expect: loss-not-decreasing
# "Shuffle the data before splitting": features and labels are shuffled with two independent
# calls, which destroys the pairing. Nothing is learnable, the loss stays at ~log(3).
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.datasets import make_classification

np.random.seed(0)
torch.manual_seed(0)
torch.set_num_threads(1)

X, y = make_classification(n_samples=4000, n_features=10, n_informative=5, n_classes=3, random_state=4)
df = pd.DataFrame(X, columns=[f"f{i}" for i in range(10)])
df["label"] = y

features = df.drop(columns="label").to_numpy().copy()
labels = df["label"].to_numpy().copy()
np.random.shuffle(features)
np.random.shuffle(labels)
n_tr = 3200
xs = torch.tensor(features[:n_tr], dtype=torch.float32)
ys = torch.tensor(labels[:n_tr])
xv = torch.tensor(features[n_tr:], dtype=torch.float32)
yv = torch.tensor(labels[n_tr:])

clf = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(clf.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
ce = nn.CrossEntropyLoss()

for epoch in range(20):
    perm = torch.randperm(n_tr)
    for k in range(0, n_tr, 64):
        b = perm[k:k + 64]
        opt.zero_grad()
        loss = ce(clf(xs[b]), ys[b])
        loss.backward()
        opt.step()
    if epoch % 5 == 4:
        with torch.no_grad():
            tl = ce(clf(xs), ys).item()
            va = (clf(xv).argmax(1) == yv).float().mean().item()
        print(f"epoch {epoch + 1}: train loss {tl:.3f}  val acc {va:.3f}")
