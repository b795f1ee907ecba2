# The raw hashed ids are mapped to 0..K-1 once, and an Embedding with K rows looks them up.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
ids = torch.randint(0, 10**16, (512,)) % 10**16
ids = torch.cat([ids[:256], ids[:256]])  # every user appears twice
clicked = torch.randint(0, 2, (512,)).float()
vocab, index = torch.unique(ids, return_inverse=True)


class ClickModel(nn.Module):
    def __init__(self, users: int, dim: int = 16) -> None:
        super().__init__()
        self.emb = nn.Embedding(users, dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, index: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.emb(index))).squeeze(1)


model = ClickModel(len(vocab))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    perm = torch.randperm(512)
    for i in range(0, 512, 64):
        idx = perm[i:i + 64]
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(index[idx]), clicked[idx])
        loss.backward()
        opt.step()
print("done", loss.item())
