# Ratings 1..4 as classes with log_softmax + NLLLoss and 5 outputs (one per "possible" rating 0..4).
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Reviews(Dataset):
    def __init__(self, n=640):
        g = torch.Generator().manual_seed(0)
        self.rating = torch.randint(1, 5, (n,), generator=g)  # 1..4 stars
        self.x = torch.randn(n, 12, generator=g) * 0.5
        self.x[:, :4] += F.one_hot(self.rating - 1, 4).float()

    def __len__(self):
        return len(self.rating)

    def __getitem__(self, i):
        return self.x[i], self.rating[i]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(12, 24)
        self.out = nn.Linear(24, 5)

    def forward(self, x):
        return F.log_softmax(self.out(torch.relu(self.hidden(x))), dim=1)


torch.manual_seed(0)
model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
nll = nn.NLLLoss()
for epoch in range(3):
    for xb, yb in DataLoader(Reviews(), batch_size=32, shuffle=True):
        for p in model.parameters():
            p.grad = None
        loss = nll(model(xb), yb)
        loss.backward()
        opt.step()
print("loss", loss.item())
