"""Two tasks on the digits with one shared trunk: which digit, and is it at least 5. The loop clears the
gradients once, then lets each task's backward() add its share before the single optimizer step."""
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.nn import functional as F


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
        self.digit = nn.Linear(64, 10)
        self.big = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(x)
        return self.digit(h), self.big(h).squeeze(1)


bunch = load_digits()
pixels = torch.as_tensor(bunch.data, dtype=torch.float32) / 16.0
digit = torch.as_tensor(bunch.target)
big = (digit >= 5).float()

torch.manual_seed(5)
net = TwoHeads()
opt = torch.optim.Adam(net.parameters(), lr=2e-3)
tasks = {
    "digit": lambda out, i: F.cross_entropy(out[0], digit[i]),
    "big": lambda out, i: F.binary_cross_entropy_with_logits(out[1], big[i]),
}
for epoch in range(4):
    for i in torch.randperm(1500).split(60):
        out = net(pixels[i])
        opt.zero_grad()
        for name, task_loss in tasks.items():
            task_loss(out, i).backward(retain_graph=True)
        opt.step()
with torch.no_grad():
    scores, _ = net(pixels[1500:])
print("digit accuracy", (scores.argmax(1) == digit[1500:]).float().mean().item())
