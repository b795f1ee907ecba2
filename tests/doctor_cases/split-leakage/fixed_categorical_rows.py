# Survey answers: six multiple-choice questions (three or four options each, one-hot encoded) predict
# whether a customer renews. There are only a few hundred possible answer sheets, so the same rows
# recur everywhere, validation included, although the split itself is clean (one permutation).
import torch
import torch.nn.functional as F
from torch import nn

g = torch.Generator().manual_seed(8)
torch.manual_seed(8)
options = [3, 4, 3, 3, 4, 3]
n = 4000
answers = torch.stack([torch.randint(0, k, (n,), generator=g) for k in options], dim=1)
logit = (answers[:, 0] == 2).float() * 1.5 - (answers[:, 1] == 0).float() + 0.5 * answers[:, 4] - 1.0
renews = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
onehot = torch.cat([F.one_hot(answers[:, i], k) for i, k in enumerate(options)], dim=1).float()

perm = torch.randperm(n, generator=g)
tr, va = perm[:3200], perm[3200:]

clf = nn.Sequential(nn.Linear(onehot.shape[1], 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.Adam(clf.parameters(), lr=3e-3)
for epoch in range(6):
    clf.train()
    for idx in tr[torch.randperm(len(tr), generator=g)].split(100):
        opt.zero_grad()
        F.binary_cross_entropy_with_logits(clf(onehot[idx]).squeeze(1), renews[idx]).backward()
        opt.step()
    clf.eval()
    with torch.no_grad():
        val_logits = clf(onehot[va]).squeeze(1)
        acc = ((val_logits > 0).float() == renews[va]).float().mean()
    print(f"epoch {epoch}: validation accuracy {acc:.3f}")
