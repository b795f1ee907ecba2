# log_softmax + NLLLoss with label smoothing on a cross-entropy twin: both correct.
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Blobs(Dataset):
    def __init__(self, n=600):
        g = torch.Generator().manual_seed(0)
        self.y = torch.randint(0, 3, (n,), generator=g)
        self.x = torch.randn(n, 8, generator=g) + self.y[:, None].float()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for xb, yb in DataLoader(Blobs(), batch_size=50, shuffle=True):
        opt.zero_grad()
        logits = model(xb)
        loss = F.nll_loss(F.log_softmax(logits, dim=1), yb) + 0.1 * F.cross_entropy(logits, yb, label_smoothing=0.1)
        loss.backward()
        opt.step()
    probs = torch.softmax(logits, dim=1)  # probabilities for reporting only
print("done", probs.shape)
