# expect: none (known miss)
# source: https://pytorch.org/tutorials/beginner/basics/quickstart_tutorial.html
# The quickstart's shape: NeuralNetwork (Flatten, 512-512 ReLU stack), CrossEntropyLoss, SGD(lr=1e-3), train()/test() functions with model.train()/model.eval(), a few epochs.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
protos = torch.rand(10, 28, 28)
y = torch.randint(0, 10, (3000,))
X = (protos[y] + 0.5 * torch.rand(3000, 28, 28)).clamp(0, 1)
train_dataloader = DataLoader(TensorDataset(X[:2500], y[:2500]), batch_size=64, shuffle=True)
test_dataloader = DataLoader(TensorDataset(X[2500:], y[2500:]), batch_size=64)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512), nn.ReLU(),
            nn.Linear(512, 512), nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


model = NeuralNetwork()
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)


def train(dataloader, model, loss_fn, optimizer):
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def test(dataloader, model, loss_fn):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    print(f"Accuracy: {(100 * correct / 500):>0.1f}%, Avg loss: {test_loss / len(dataloader):>8f}")


for t in range(3):
    train(train_dataloader, model, loss_fn, optimizer)
    test(test_dataloader, model, loss_fn)
