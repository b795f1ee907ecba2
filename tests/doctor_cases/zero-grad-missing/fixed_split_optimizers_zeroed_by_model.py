# Fine-tuning with two optimizers: SGD for the pretrained body, Adam for the new head.
# Both are cleared at once by model.zero_grad(set_to_none=False), which fills zeros.
import torch
from sklearn.datasets import load_breast_cancer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(8)
table = load_breast_cancer()
x = torch.tensor(table.data, dtype=torch.float32)
x = (x - x.mean(0)) / x.std(0)
y = torch.tensor(table.target, dtype=torch.float32).unsqueeze(1)
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(30, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(32, 1)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(inputs))


model = Classifier()
body_opt = torch.optim.SGD(model.body.parameters(), lr=1e-2, momentum=0.9)
head_opt = torch.optim.Adam(model.head.parameters(), lr=3e-3)
criterion = nn.BCEWithLogitsLoss()
for epoch in range(6):
    total = 0.0
    for xb, yb in loader:
        model.zero_grad(set_to_none=False)
        loss = criterion(model(xb), yb)
        loss.backward()
        body_opt.step()
        head_opt.step()
        total += loss.item() * len(xb)
    print(f"epoch {epoch}: loss {total / len(x):.4f}")
