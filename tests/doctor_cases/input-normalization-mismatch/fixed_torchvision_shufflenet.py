# A torchvision ShuffleNetV2 (x0.5) "pretrained" on images normalized with ImageNet's mean and std (here
# trained briefly on synthetic images and saved, standing in for downloaded weights),
# then fine-tuned on pixels normalized the same way.
import io

import torch
import torch.nn.functional as F
import torchvision
from torch import nn

torch.manual_seed(0)
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def images(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Smooth synthetic pictures in [0, 1] with ImageNet-like channel statistics; label: which half is brighter."""
    base = F.interpolate(torch.randn(n, 3, 4, 4), size=16, mode="bilinear", align_corners=False)
    x = (MEAN + STD * base / base.std()).clamp(0, 1)
    return x, (x[:, :, :, :8].mean((1, 2, 3)) > x[:, :, :, 8:].mean((1, 2, 3))).long()


net = torchvision.models.shufflenet_v2_x0_5(weights=None, num_classes=2)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for step in range(30):
    x, y = images(16)
    loss = F.cross_entropy(net((x - MEAN) / STD), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
buffer = io.BytesIO()
torch.save(net.state_dict(), buffer)

model = torchvision.models.shufflenet_v2_x0_5(weights=None)
buffer.seek(0)
model.fc = nn.Linear(1024, 2)
model.load_state_dict(torch.load(buffer, weights_only=True))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
model.train()
for step in range(25):
    x, y = images(16)
    loss = F.cross_entropy(model((x - MEAN) / STD), y)  # as the weights were trained
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.3f}")
