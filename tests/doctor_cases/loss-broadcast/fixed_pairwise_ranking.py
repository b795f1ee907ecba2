# Learning to rank search results: the loss matches every pair's score gap to its relevance gap,
# an (N, N) difference built on purpose from the (N, 1) scores.
import torch
from torch import nn

torch.manual_seed(8)
docs = torch.randn(600, 12)
relevance = docs[:, :3].sum(1) + 0.2 * torch.randn(600)

scorer = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.Adam(scorer.parameters(), lr=3e-3)
for step in range(80):
    idx = torch.randperm(600)[:40]
    s = scorer(docs[idx])                      # (40, 1)
    r = relevance[idx].unsqueeze(1)            # (40, 1)
    score_gap = s - s.T                        # (40, 40)
    rel_gap = r - r.T
    loss = ((score_gap - rel_gap) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("pairwise loss", round(loss.item(), 4))
