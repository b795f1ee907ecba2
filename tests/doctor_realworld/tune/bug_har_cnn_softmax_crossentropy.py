# expect: softmax-before-cross-entropy
# source: https://github.com/jindongwang/Deep-learning-activity-recognition/issues/10
# Activity-recognition CNN over 9-channel sensor windows: forward() returns F.softmax(out) and training uses nn.CrossEntropyLoss.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
N_CLASS, N_CHANNEL, WIN = 6, 9, 64
labels = torch.randint(0, N_CLASS, (900,))
t = torch.linspace(0, 6.28, WIN)
freq = (labels.float() + 1)[:, None, None]
x = torch.sin(freq * t[None, None, :] * (1 + torch.arange(N_CHANNEL)[None, :, None] / 9)) + 0.3 * torch.randn(900, N_CHANNEL, WIN)
x = x.unsqueeze(2)  # (N, 9, 1, 64), as the repo reshapes windows for Conv2d
train_loader = DataLoader(TensorDataset(x, labels), batch_size=64, shuffle=True)


class Network(nn.Module):
    def __init__(self):
        super(Network, self).__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(N_CHANNEL, 32, kernel_size=(1, 9)), nn.ReLU(), nn.MaxPool2d((1, 2), stride=2))
        self.conv2 = nn.Sequential(nn.Conv2d(32, 64, kernel_size=(1, 9)), nn.ReLU(), nn.MaxPool2d((1, 2), stride=2))
        self.fc1 = nn.Sequential(nn.Linear(64 * 10, 256), nn.ReLU())
        self.fc2 = nn.Linear(256, N_CLASS)

    def forward(self, x):
        out = self.conv2(self.conv1(x))
        out = out.reshape(out.size(0), -1)
        out = self.fc2(self.fc1(out))
        return F.softmax(out, dim=1)


model = Network()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_func = nn.CrossEntropyLoss()
for e in range(4):
    correct, total_loss = 0, 0
    for sample, target in train_loader:
        output = model(sample)
        loss = loss_func(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        correct += (output.argmax(1) == target).sum().item()
    print(f'Epoch {e}: loss {total_loss / len(train_loader):.4f}, acc {correct / 900:.3f}')
