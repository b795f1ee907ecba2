# The official MNIST example's recipe on the scikit-learn digits (8x8), but Adadelta at lr=400 (a rate from a
# sweep that multiplied instead of divided) with StepLR(gamma=0.7), log_softmax + nll_loss, two short epochs.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, 1, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, 1, padding=1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def train(model, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 10 == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}]\tLoss: {loss.item():.6f}")


def test(model, test_loader):
    model.eval()
    test_loss = correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.argmax(dim=1).eq(target).sum().item()
    print(f"Test set: Average loss: {test_loss / len(test_loader.dataset):.4f}, "
          f"Accuracy: {correct}/{len(test_loader.dataset)}")


LR = 400.0

torch.manual_seed(1)
digits = load_digits()
images = (torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0 - 0.3) / 0.4
labels = torch.tensor(digits.target)
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[:1400], labels[:1400]),
                                           batch_size=64, shuffle=True)
test_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[1400:], labels[1400:]),
                                          batch_size=1000)
model = Net()
optimizer = torch.optim.Adadelta(model.parameters(), lr=LR)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 3):
    train(model, train_loader, optimizer, epoch)
    test(model, test_loader)
    scheduler.step()
