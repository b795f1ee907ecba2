# source: https://github.com/fungtion/DANN_py3/issues/8
# original: ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 100])
# half: tune
# cause mentions: drop_last|one sample|single sample
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 100), nn.BatchNorm1d(100), nn.ReLU(), nn.Linear(100, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(17, 20), torch.randint(0, 2, (17,))
for start in range(0, 17, 8):  # the last batch holds a single sample
    out = model(x[start:start + 8])  # <- fails
    loss = nn.functional.cross_entropy(out, y[start:start + 8])
    opt.zero_grad()
    loss.backward()
    opt.step()
