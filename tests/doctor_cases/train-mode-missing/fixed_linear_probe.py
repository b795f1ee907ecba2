# Linear probe: a CNN (with BatchNorm) is trained, then a fresh linear layer is fitted on its
# frozen features with the whole model in eval mode on purpose; only the new layer trains.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
y = torch.tensor(digits.target)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(F.max_pool2d(F.relu(self.bn(self.conv(x))), 2).flatten(1))


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(15):
    loss = F.cross_entropy(model(x[:1000]), y[:1000])
    opt.zero_grad()
    loss.backward()
    opt.step()

# probe: new head, everything else frozen and in eval mode
model.fc = nn.Linear(8 * 16, 10)
for name, p in model.named_parameters():
    p.requires_grad_(name.startswith("fc."))
model.eval()
probe_opt = torch.optim.Adam(model.fc.parameters(), lr=1e-2)
for step in range(30):
    idx = torch.randint(1000, 1797, (128,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    probe_opt.zero_grad()
    loss.backward()
    probe_opt.step()
print("probe loss", loss.item())
