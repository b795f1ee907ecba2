# source: https://github.com/Harry24k/adversarial-attacks-pytorch/issues/2
# original: RuntimeError: you can only change requires_grad flags of leaf variables.
# half: tune
# cause mentions: detach|leaf
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
image = torch.randn(1, 10, requires_grad=True)
for step in range(3):
    image = image + 0.01 * torch.randn_like(image)  # a computed tensor now
    image.requires_grad = True  # <- fails
    loss = model(image).max()
    loss.backward()
