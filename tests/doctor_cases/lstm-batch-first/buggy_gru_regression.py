# Sequence regression with a GRU on float features from a DataLoader: the batches are
# (batch, time, features) but the GRU expects (time, batch, features).
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class Signals(Dataset):
    def __init__(self, n: int, steps: int) -> None:
        self.x = torch.randn(n, steps, 3)
        self.y = self.x[:, :, 0].cumsum(1)[:, -1:] * 0.3  # one target per sequence

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[i], self.y[i]


gru = nn.GRU(input_size=3, hidden_size=24, num_layers=1)
head = nn.Linear(24, 1)
opt = torch.optim.Adam([*gru.parameters(), *head.parameters()], lr=1e-2)
loader = DataLoader(Signals(640, 15), batch_size=32, shuffle=True)
for epoch in range(3):
    for xb, yb in loader:
        out, h = gru(xb)
        pred = head(out.mean(dim=1))
        loss = F.mse_loss(pred, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
