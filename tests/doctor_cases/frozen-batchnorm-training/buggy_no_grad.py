# Fine-tuning a new head on a frozen backbone: the backbone (with BatchNorm) is pretrained on digits 0-4 and
# used as a fixed feature extractor under torch.no_grad(), but left in training mode: its BatchNorm statistics
# follow the new data although the backbone is meant to stay as it was.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)



def make_backbone() -> nn.Sequential:
    return nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 32), nn.BatchNorm1d(32),
                         nn.ReLU())


def pretrain() -> dict:
    """Pretrain a backbone on digits 0-4 of the training rows; return its weights."""
    net, head = make_backbone(), nn.Linear(32, 5)
    pre = torch.optim.Adam([*net.parameters(), *head.parameters()], lr=1e-2)
    small = y[:1500] < 5
    for step in range(20):
        loss = F.cross_entropy(head(net(x[:1500][small])), y[:1500][small])
        pre.zero_grad()
        loss.backward()
        pre.step()
    return net.state_dict()


backbone = make_backbone()
backbone.load_state_dict(pretrain())
head = nn.Linear(32, 10)
opt = torch.optim.Adam(head.parameters(), lr=1e-2)
for epoch in range(4):
    for idx in torch.randperm(1500).split(100):
        with torch.no_grad():
            features = backbone(x[idx])
        loss = F.cross_entropy(head(features), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = (head(backbone(x[1500:])).argmax(1) == y[1500:]).float().mean().item()
    print(f"epoch {epoch} loss {loss.item():.3f} acc {acc:.3f}")
