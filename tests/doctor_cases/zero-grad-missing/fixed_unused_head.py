# Diabetes progression regression with an optional auxiliary head, switched off in this run.
# The loop clears the gradients each step, and the auxiliary head is only built when it is used.
import torch
from sklearn.datasets import load_diabetes
from torch import nn

torch.manual_seed(21)
data = load_diabetes()
inputs = torch.tensor(data.data, dtype=torch.float32)
inputs = (inputs - inputs.mean(0)) / inputs.std(0)
target = torch.tensor(data.target, dtype=torch.float32)
target = (target - target.mean()) / target.std()


class Regressor(nn.Module):
    def __init__(self, use_aux: bool = False) -> None:
        super().__init__()
        self.use_aux = use_aux
        self.trunk = nn.Sequential(nn.Linear(10, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU())
        self.out = nn.Linear(64, 1)
        self.aux = nn.Linear(64, 3) if use_aux else None  # predicts binned age when use_aux is on

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.trunk(x)
        return self.out(h).squeeze(-1)


net = Regressor()
opt = torch.optim.RMSprop(net.parameters(), lr=1e-3)
for epoch in range(8):
    perm = torch.randperm(len(target))
    for start in range(0, len(target), 32):
        idx = perm[start:start + 32]
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(inputs[idx]), target[idx])
        loss.backward()
        opt.step()
    print(f"epoch {epoch}: last batch mse {loss.item():.3f}")
