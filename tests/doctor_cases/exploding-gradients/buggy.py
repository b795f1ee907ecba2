# A 20-layer tanh MLP initialised with std=0.4 (far too large for 64-wide layers) and trained with
# SGD: after a few steps the gradients grow by orders of magnitude at every step.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(1024, 16)
y = torch.tanh(x[:, :4].sum(1, keepdim=True))

layers = [nn.Linear(16, 64), nn.Tanh()]
for _ in range(19):
    layers += [nn.Linear(64, 64), nn.Tanh()]
model = nn.Sequential(*layers, nn.Linear(64, 1))
for m in model.modules():
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, std=0.4)
        nn.init.zeros_(m.bias)

optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
for step in range(60):
    idx = torch.randint(0, 1024, (32,))
    optimizer.zero_grad()
    loss = loss_fn(model(x[idx]), y[idx])
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(f"step {step}: loss {loss.item():.4g}")
