# expect: none
# source: https://github.com/patrickloeber/pytorchTutorial/issues/19
# The tutorial's feed-forward net from part 13 on: outputs, loss, then optimizer.zero_grad(), loss.backward(), optimizer.step() (the issue asked whether zeroing after the loss loses the gradient; it does not).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
input_size, hidden_size, num_classes = 784, 100, 10
num_epochs, batch_size, learning_rate = 2, 100, 0.001
protos = torch.rand(10, input_size)
labels_all = torch.randint(0, 10, (3000,))
images_all = (protos[labels_all] + 0.5 * torch.rand(3000, input_size)).clamp(0, 1)
train_loader = DataLoader(TensorDataset(images_all[:2500], labels_all[:2500]), batch_size=batch_size, shuffle=True)
test_loader = DataLoader(TensorDataset(images_all[2500:], labels_all[2500:]), batch_size=batch_size, shuffle=False)


class NeuralNet(nn.Module):
    def __init__(self, input_size, hidden_size, num_classes):
        super(NeuralNet, self).__init__()
        self.l1 = nn.Linear(input_size, hidden_size)
        self.relu = nn.ReLU()
        self.l2 = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        return self.l2(self.relu(self.l1(x)))


model = NeuralNet(input_size, hidden_size, num_classes)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
n_total_steps = len(train_loader)
for epoch in range(num_epochs):
    for i, (images, labels) in enumerate(train_loader):
        images = images.reshape(-1, 28 * 28)
        outputs = model(images)
        loss = criterion(outputs, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (i + 1) % 10 == 0:
            print(f'Epoch [{epoch + 1}/{num_epochs}], Step [{i + 1}/{n_total_steps}], Loss: {loss.item():.4f}')
with torch.no_grad():
    n_correct = 0
    for images, labels in test_loader:
        outputs = model(images.reshape(-1, 28 * 28))
        n_correct += (outputs.argmax(1) == labels).sum().item()
    print(f'Accuracy: {100.0 * n_correct / 500} %')
