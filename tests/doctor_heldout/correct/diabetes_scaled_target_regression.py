# expect: none
# Regression with inputs and target both standardised (target in its own units only for the
# final report), SGD with momentum, ReLU MLP, early stopping on validation MSE.
import copy
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

torch.manual_seed(0)
torch.set_num_threads(1)

X, t = load_diabetes(return_X_y=True)
X_tr, X_va, t_tr, t_va = train_test_split(X, t, test_size=0.2, random_state=0)
xs, ts = StandardScaler().fit(X_tr), StandardScaler().fit(t_tr.reshape(-1, 1))
X_tr, X_va = (torch.tensor(xs.transform(a), dtype=torch.float32) for a in (X_tr, X_va))
t_tr, t_va = (torch.tensor(ts.transform(a.reshape(-1, 1)), dtype=torch.float32) for a in (t_tr, t_va))

reg = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(reg.parameters(), lr=0.01, momentum=0.9)
best, best_state, patience = float("inf"), None, 0
for epoch in range(100):
    reg.train()
    perm = torch.randperm(len(X_tr))
    for i in range(0, len(perm), 32):
        b = perm[i:i + 32]
        opt.zero_grad()
        F.mse_loss(reg(X_tr[b]), t_tr[b]).backward()
        opt.step()
    reg.eval()
    with torch.no_grad():
        v = F.mse_loss(reg(X_va), t_va).item()
    if v < best - 1e-4:
        best, best_state, patience = v, copy.deepcopy(reg.state_dict()), 0
    else:
        patience += 1
        if patience >= 5:
            print(f"early stop at epoch {epoch}")
            break
reg.load_state_dict(best_state)
with torch.no_grad():
    pred = ts.inverse_transform(reg(X_va).numpy())
rmse = np.sqrt(np.mean((pred - ts.inverse_transform(t_va.numpy())) ** 2))
print(f"best val mse (scaled) {best:.3f}  val RMSE in original units {rmse:.1f}")
