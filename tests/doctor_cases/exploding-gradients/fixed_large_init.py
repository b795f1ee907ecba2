# The eight-layer classifier with He (Kaiming) initialisation, which keeps the signal's scale from layer
# to layer: the first loss is near ln(5) and the same SGD settings train it smoothly.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self, n_in, n_classes, width=64, depth=8):
        super().__init__()
        blocks, d = [], n_in
        for _ in range(depth):
            blocks += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*blocks)
        self.head = nn.Linear(width, n_classes)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.head(self.body(x))


g = torch.Generator().manual_seed(1)
teacher = torch.randn(24, 5, generator=g)
x = torch.randn(3000, 24, generator=g)
y = (x @ teacher + 0.5 * torch.randn(3000, 5, generator=g)).argmax(1)
train = DataLoader(TensorDataset(x[:2400], y[:2400]), batch_size=50, shuffle=True,
                   generator=torch.Generator().manual_seed(0))

torch.manual_seed(0)
model = Classifier(24, 5)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()
for epoch in range(6):
    for xb, yb in train:
        opt.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        opt.step()
with torch.no_grad():
    model.eval()
    acc = (model(x[2400:]).argmax(1) == y[2400:]).float().mean().item()
print(f"validation accuracy {acc:.3f}")
