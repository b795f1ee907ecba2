# expect: dead-relu
# Disease-progression regression: inputs standardised, but the target is left in its raw units
# (25..346). The first SGD steps see huge errors, the big updates push the second hidden layer's
# pre-activations below zero for every patient, and those ReLUs never come back.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

torch.manual_seed(0)
torch.set_num_threads(1)

raw_x, target = load_diabetes(return_X_y=True)
inputs = torch.tensor(StandardScaler().fit_transform(raw_x), dtype=torch.float32)
target = torch.tensor(target, dtype=torch.float32).unsqueeze(1)
n_train = 350
x_tr, y_tr, x_va, y_va = inputs[:n_train], target[:n_train], inputs[n_train:], target[n_train:]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(10, 64)
        self.l2 = nn.Linear(64, 64)
        self.l3 = nn.Linear(64, 1)

    def forward(self, x):
        return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))


reg = Regressor()
opt = torch.optim.SGD(reg.parameters(), lr=1e-3)

for ep in range(30):
    perm = torch.randperm(n_train)
    for i in range(0, n_train, 32):
        b = perm[i:i + 32]
        opt.zero_grad()
        loss = F.mse_loss(reg(x_tr[b]), y_tr[b])
        loss.backward()
        opt.step()
    if ep % 10 == 9:
        with torch.no_grad():
            va = F.mse_loss(reg(x_va), y_va).item()
        print(f"epoch {ep + 1}: train mse {loss.item():.1f}  val mse {va:.1f}  (val var {y_va.var().item():.1f})")
