# expect: none (known miss)
# source: https://github.com/vturrisi/solo-learn/issues/135
# Self-supervised method with an online linear probe: the classifier reads feats.detach() while the encoder is trained by the SSL loss on the undetached features (detach is not in place), which is intended.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BaseMethod(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 64))
        self.projector = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32))
        self.classifier = nn.Linear(64, num_classes)

    def forward(self, x):
        feats = self.backbone(x)
        logits = self.classifier(feats.detach())
        return feats, logits


def nt_xent(z1, z2, t=0.2):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / t
    sim.fill_diagonal_(-1e9)
    n = z1.size(0)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


model = BaseMethod()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
centers = torch.randn(5, 32) * 2
for step in range(150):
    y = torch.randint(0, 5, (64,))
    x = centers[y] + torch.randn(64, 32)
    x1, x2 = x + 0.3 * torch.randn_like(x), x + 0.3 * torch.randn_like(x)
    f1, logits = model(x1)
    f2, _ = model(x2)
    loss = nt_xent(model.projector(f1), model.projector(f2)) + F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item(), (logits.argmax(1) == y).float().mean().item())
