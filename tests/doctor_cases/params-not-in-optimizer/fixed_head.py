# The head is replaced before the optimizer is created; the first backbone layer is frozen on
# purpose (requires_grad False, left out of the optimizer); a teacher guides the training
# under torch.no_grad() and is in no optimizer.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class Digits(Dataset):
    def __init__(self) -> None:
        d = load_digits()
        self.x = torch.tensor(d.data, dtype=torch.float32) / 16.0
        self.y = torch.tensor(d.target)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))


model = Net(classes=2)
model.head = nn.Linear(32, 10)
for p in model.backbone[0].parameters():
    p.requires_grad_(False)
opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
teacher = Net(classes=10).eval()
loader = DataLoader(Digits(), batch_size=64, shuffle=True)

for epoch in range(2):
    for xb, yb in loader:
        opt.zero_grad(set_to_none=True)
        logits = model(xb)
        with torch.no_grad():
            soft = F.softmax(teacher(xb) / 2.0, dim=1)
        loss = F.cross_entropy(logits, yb) + 0.1 * F.kl_div(F.log_softmax(logits / 2.0, dim=1), soft,
                                                            reduction="batchmean")
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
