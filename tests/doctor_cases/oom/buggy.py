# A click-through model one-hot encodes raw 64-bit hashed ids inside forward: one_hot makes one
# column per possible id (about 10**16), far more memory than any machine has.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
ids = torch.randint(0, 10**16, (512,))  # hashed user ids, as they come from the logs
clicked = torch.randint(0, 2, (512,)).float()


class ClickModel(nn.Module):
    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.proj = nn.LazyLinear(dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        onehot = F.one_hot(ids).float()
        return self.head(torch.relu(self.proj(onehot))).squeeze(1)


model = ClickModel()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for i in range(0, 512, 64):
    opt.zero_grad()
    loss = F.binary_cross_entropy_with_logits(model(ids[i:i + 64]), clicked[i:i + 64])
    loss.backward()
    opt.step()
