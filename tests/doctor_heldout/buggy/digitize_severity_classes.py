# expect: labels-off-by-one
# Severity classes made with np.digitize against edges that include the minimum
# ([q0, q25, q50, q75]): digitize returns 1..4, not 0..3, for a 4-way head. Crashes on CPU
# ("Target 4 is out of bounds").
import numpy as np
import torch
from torch import nn
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

rng = np.random.default_rng(0)
torch.manual_seed(0)
torch.set_num_threads(1)

X, progression = load_diabetes(return_X_y=True)
edges = np.quantile(progression, [0.0, 0.25, 0.5, 0.75])
severity = np.digitize(progression, edges)          # meant: 4 classes, 0 = mild ... 3 = severe
N_CLASSES = len(edges)

X = StandardScaler().fit_transform(X).astype(np.float32)
idx = rng.permutation(len(X))
tr, te = idx[:350], idx[350:]

net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, N_CLASSES))
opt = torch.optim.Adam(net.parameters(), lr=3e-3)
ce = nn.CrossEntropyLoss()
xt, yt = torch.from_numpy(X[tr]), torch.from_numpy(severity[tr]).long()

for epoch in range(60):
    perm = torch.randperm(len(xt))
    for s in range(0, len(xt), 25):
        b = perm[s:s + 25]
        loss = ce(net(xt[b]), yt[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
    if epoch % 20 == 19:
        with torch.no_grad():
            pred = net(torch.from_numpy(X[te])).argmax(1).numpy()
        print(f"epoch {epoch + 1}: loss {loss.item():.3f}  test acc {(pred == severity[te]).mean():.3f}")
