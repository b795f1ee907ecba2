# A small CNN trained from scratch on pixels scaled to [0, 1] (after an unrelated run on standardized inputs):
# nothing is loaded, so there are no pretrained statistics to match.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1)  # (N, 1, 8, 8), values 0-16
labels = torch.tensor(digits.target)
mean, std = images[:1500].mean(), images[:1500].std()


def make_net() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(8 * 4 * 4, 10))


# The pretraining run: standardized inputs, weights saved.
net = make_net()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(30):
    idx = torch.randint(0, 1500, (64,))
    loss = F.cross_entropy(net((images[idx] - mean) / std), labels[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()

# A new model from scratch, inputs scaled to [0, 1].
model = make_net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    model.train()
    for idx in torch.randperm(1500).split(64):
        loss = F.cross_entropy(model(images[idx] / 16), labels[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
