# A small CNN on 8x8 digits trained full-batch in a plain loop; the test accuracy is
# measured in chunks under torch.inference_mode() while the model is still in training mode.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
y = torch.tensor(digits.target)
x_train, y_train, x_test, y_test = x[:1500], y[:1500], x[1500:], y[1500:]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(30):
    loss = F.cross_entropy(model(x_train), y_train)
    model.zero_grad()
    loss.backward()
    opt.step()

with torch.inference_mode():
    preds = torch.cat([model(chunk).argmax(1) for chunk in x_test.split(100)])
print("test accuracy", (preds == y_test).float().mean().item())
