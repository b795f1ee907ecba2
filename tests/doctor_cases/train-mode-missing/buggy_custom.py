# A custom CNN with BatchNorm on 8x8 digits, trained step by step in a plain loop; every 10
# steps it is evaluated with model.eval(), and the loop never calls model.train() again.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
y = torch.tensor(digits.target)
x_train, y_train, x_val, y_val = x[:1500], y[:1500], x[1500:], y[1500:]


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).flatten(1))


model = SmallCNN()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(40):
    idx = torch.randint(0, len(x_train), (64,))
    out = model(x_train[idx])
    loss = F.nll_loss(F.log_softmax(out, dim=1), y_train[idx])
    for p in model.parameters():
        p.grad = None
    loss.backward()
    opt.step()
    if step % 10 == 0:
        model.eval()
        with torch.no_grad():
            acc = (model(x_val).argmax(1) == y_val).float().mean().item()
        print(f"step {step} loss {loss.item():.3f} val acc {acc:.3f}")
