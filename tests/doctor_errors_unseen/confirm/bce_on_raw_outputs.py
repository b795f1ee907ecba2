# source: https://github.com/ray-project/ray/issues/17117
# original: RuntimeError: all elements of input should be between 0 and 1
# half: confirm
# cause mentions: BCEWithLogits|sigmoid
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))  # no sigmoid at the end
criterion = nn.BCELoss()
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(64, 4) * 5
y = (x[:, :1] > 0).float()
for epoch in range(5):
    out = model(x)
    loss = criterion(out, y)  # <- fails
    opt.zero_grad()
    loss.backward()
    opt.step()
