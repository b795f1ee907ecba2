# A conv net in nn.Sequential fed the digits as flat 64-value rows (the images were flattened).
import torch
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0  # (N, 64): flat rows
y = torch.tensor(digits.target)

model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(8 * 4 * 4, 10),
)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(3):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 128):
        idx = perm[i:i + 128]
        out = model(x[idx])
        loss = loss_fn(out, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, loss.item())
