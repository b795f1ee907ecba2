# expect: none
# A short run: a small CNN is trained briefly on digits 0-4, then fine-tuned for only 20 steps
# on digits 5-9 with a new head (created *before* the optimizer). Short runs are normal here.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits

torch.manual_seed(0)
torch.set_num_threads(1)

d = load_digits()
imgs = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
lab = torch.tensor(d.target)
low, high = lab < 5, lab >= 5


class Conv(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Flatten())
        self.head = nn.Linear(32 * 2 * 2, n_cls)

    def forward(self, x):
        return self.head(self.features(x))


net = Conv(5)
opt = torch.optim.Adam(net.parameters(), lr=3e-3)
xa, ya = imgs[low], lab[low]
for step in range(150):
    b = torch.randint(0, len(xa), (64,))
    opt.zero_grad()
    pre_loss = F.cross_entropy(net(xa[b]), ya[b])
    pre_loss.backward()
    opt.step()
print(f"pretrain done: loss {pre_loss.item():.3f}")

net.head = nn.Linear(32 * 2 * 2, 5)
ft_opt = torch.optim.Adam([{"params": net.features.parameters(), "lr": 1e-3},
                           {"params": net.head.parameters(), "lr": 1e-2}])
xb_all, yb_all = imgs[high][:400], lab[high][:400] - 5
xt, yt = imgs[high][400:], lab[high][400:] - 5
for step in range(20):
    b = torch.randint(0, len(xb_all), (32,))
    ft_opt.zero_grad()
    loss = F.cross_entropy(net(xb_all[b]), yb_all[b])
    loss.backward()
    ft_opt.step()
    if step % 5 == 4:
        with torch.no_grad():
            acc = (net(xt).argmax(1) == yt).float().mean().item()
        print(f"fine-tune step {step + 1}: loss {loss.item():.3f}  held-out acc {acc:.3f}")
