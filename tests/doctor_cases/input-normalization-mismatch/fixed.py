# Fine-tuning a small pretrained CNN: it was trained on standardized digit images ((x - mean) / std) and its
# weights saved; the fine-tuning script loads them and standardizes the inputs with the same mean and std.
import io

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
buffer = io.BytesIO()
torch.save(net.state_dict(), buffer)

# Fine-tuning: the weights loaded, the inputs standardized as in pretraining.
model = make_net()
buffer.seek(0)
model.load_state_dict(torch.load(buffer, weights_only=True))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    model.train()
    for idx in torch.randperm(1500).split(64):
        loss = F.cross_entropy(model((images[idx] - mean) / std), labels[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
