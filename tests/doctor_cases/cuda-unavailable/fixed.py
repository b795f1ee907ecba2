# A notebook cell moved to a script: GPUs are hidden to debug on the CPU, and the device is chosen from what
# PyTorch can see.
import os

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # "debug on the CPU first"

import torch  # noqa: E402
from torch import nn  # noqa: E402

torch.manual_seed(0)
x = torch.randn(256, 10)
y = x @ torch.randn(10, 1) + 0.1 * torch.randn(256, 1)

device = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for epoch in range(20):
    xb, yb = x.to(device), y.to(device)
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(xb), yb)
    loss.backward()
    opt.step()
print(f"final loss {loss.item():.4f}")
