# A metric-learning model: L2-normalized embeddings, triplet margin loss, cosine similarity eval.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
d = load_digits()
x = torch.tensor(d.data, dtype=torch.float32) / 16.0
y = torch.tensor(d.target)
net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 16))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
triplet = nn.TripletMarginLoss(margin=0.3)
for step in range(40):
    idx = torch.randint(0, 1500, (64,))
    a = idx
    p = torch.tensor([int(torch.nonzero(y == y[i]).flatten()[torch.randint(0, 150, ())]) for i in a])
    n = torch.tensor([int(torch.nonzero(y != y[i]).flatten()[torch.randint(0, 1000, ())]) for i in a])
    ea, ep, en = (F.normalize(net(x[t]), dim=1) for t in (a, p, n))
    loss = triplet(ea, ep, en)
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    e = F.normalize(net(x[1500:]), dim=1)
    sim = e @ e.T
print(f"mean similarity {sim.mean().item():.3f}")
