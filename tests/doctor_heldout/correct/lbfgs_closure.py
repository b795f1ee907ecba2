# expect: none
# Full-batch LBFGS with a closure (logistic regression on breast cancer).
import torch
import torch.nn as nn
from sklearn.datasets import load_breast_cancer

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_breast_cancer()
X = torch.tensor(d.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(d.target, dtype=torch.float32).unsqueeze(1)

model = nn.Linear(30, 1)
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=20, history_size=10)
crit = nn.BCEWithLogitsLoss()


def closure():
    opt.zero_grad()
    loss = crit(model(X), y)
    loss.backward()
    return loss


for it in range(10):
    loss = opt.step(closure)
    print(it, loss.item())
