# An autoencoder-style regressor whose encoder output is detached "to save memory": the encoder
# never learns. Custom Dataset, gradients cleared by setting .grad to None by hand.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class Waves(Dataset):
    def __init__(self, n: int = 1024) -> None:
        self.x = torch.randn(n, 12)
        self.y = torch.sin(self.x[:, :3]).sum(1, keepdim=True)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int):
        return self.x[i], self.y[i]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 48), nn.GELU(), nn.Linear(48, 16), nn.GELU())
        self.decoder = nn.Sequential(nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.encoder(x).detach()
        return self.decoder(z)


model = Model()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
loader = DataLoader(Waves(), batch_size=32, shuffle=True)

for epoch in range(2):
    for xb, yb in loader:
        for p in model.parameters():
            p.grad = None
        loss = nn.functional.smooth_l1_loss(model(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
