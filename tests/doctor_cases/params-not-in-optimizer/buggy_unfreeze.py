# Gradual unfreezing: the optimizer is built while the encoder is frozen, then the encoder is
# unfrozen in epoch 1 but never added to the optimizer. Cleared with model.zero_grad().
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(1024, 16)
y = torch.sin(x[:, :4]).sum(1, keepdim=True)


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.out = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.encoder(x))


model = Regressor()
model.encoder.requires_grad_(False)
opt = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
mse = nn.MSELoss()

for epoch in range(3):
    if epoch == 1:
        model.encoder.requires_grad_(True)  # bug: the optimizer was built without these
    for i in range(0, 1024, 64):
        model.zero_grad()
        loss = mse(model(x[i:i + 64]), y[i:i + 64])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
