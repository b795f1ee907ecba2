# Transfer learning: a "pretrained" conv backbone frozen and kept in eval mode (BN stats fixed),
# only the new head is trained; validation under inference_mode with model.eval().
import torch
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
d = load_digits()
x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
y = torch.tensor(d.target)
backbone = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
                         nn.Flatten())
for p in backbone.parameters():
    p.requires_grad = False
head = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, 10))
model = nn.Sequential(backbone, head)
opt = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)
for epoch in range(4):
    model.train()
    backbone.eval()  # frozen: keep its batch-norm statistics
    for i in range(0, 1500, 50):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 50]), y[i:i + 50])
        loss.backward()
        opt.step()
    model.eval()
    with torch.inference_mode():
        acc = (model(x[1500:]).argmax(1) == y[1500:]).float().mean().item()
print(f"val acc {acc:.3f}")
