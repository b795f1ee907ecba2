# expect: params-not-in-optimizer
# Transfer learning: a backbone is "pretrained" on one task, then a new head is attached for the
# 10-class task with the backbone frozen. The fine-tuning optimizer was built (over the trainable
# parameters) *before* the head was swapped, so it still holds the old head's tensors; the new
# head gets gradients but is never stepped, and nothing learns.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits

torch.manual_seed(0)
torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self, n_out):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU())
        self.head = nn.Linear(64, n_out)

    def forward(self, x):
        return self.head(self.backbone(x))


d = load_digits()
x = torch.tensor(d.data / 16.0, dtype=torch.float32)
y = torch.tensor(d.target)
x_tr, y_tr, x_te, y_te = x[:1400], y[:1400], x[1400:], y[1400:]


def run_epochs(net, opt, targets, loss_fn, epochs):
    for _ in range(epochs):
        perm = torch.randperm(len(x_tr))
        for i in range(0, len(perm), 50):
            b = perm[i:i + 50]
            opt.zero_grad()
            loss = loss_fn(net(x_tr[b]), targets[b])
            loss.backward()
            opt.step()
    return loss.item()


# stage 1: pretrain on a binary "is it >= 5" task
net = Net(n_out=1)
pre_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
bin_t = (y_tr >= 5).float().unsqueeze(1)
print("pretrain loss", run_epochs(net, pre_opt, bin_t, F.binary_cross_entropy_with_logits, 3))

# stage 2: fine-tune on the 10 digit classes
for p_ in net.backbone.parameters():
    p_.requires_grad_(False)
ft_opt = torch.optim.Adam([p_ for p_ in net.parameters() if p_.requires_grad], lr=1e-2)
net.head = nn.Linear(64, 10)
for round_ in range(3):
    l = run_epochs(net, ft_opt, y_tr, F.cross_entropy, 2)
    with torch.no_grad():
        acc = (net(x_te).argmax(1) == y_te).float().mean().item()
    print(f"fine-tune round {round_}: loss {l:.3f}  test acc {acc:.3f}")
