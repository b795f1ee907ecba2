# expect: none
# Early stopping on validation loss with patience; best state_dict restored at the end.
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_breast_cancer

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_breast_cancer()
X = torch.tensor(d.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(d.target, dtype=torch.float32).unsqueeze(1)
Xtr, ytr, Xva, yva = X[:450], y[:450], X[450:], y[450:]

model = nn.Sequential(nn.Linear(30, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
best, best_state, patience, bad = float("inf"), None, 5, 0
for epoch in range(200):
    model.train()
    for i in range(0, 450, 32):
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(Xtr[i:i + 32]), ytr[i:i + 32])
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        val = F.binary_cross_entropy_with_logits(model(Xva), yva).item()
    if val < best - 1e-4:
        best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
    else:
        bad += 1
        if bad >= patience:
            print("early stop at", epoch)
            break
model.load_state_dict(best_state)
print("best val", best)
