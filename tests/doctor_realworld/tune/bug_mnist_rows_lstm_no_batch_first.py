# expect: lstm-batch-first
# source: https://github.com/pytorch/pytorch/issues/1538
# MNIST read row by row with an LSTM: the images come as (batch, 28, 28) but the nn.LSTM is built without batch_first=True (commented out), so it runs over the batch as if it were time.
import torch
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
batch_size = 100
learning_rate = 1e-2
num_epoches = 2
strokes = torch.rand(10, 28, 28)
labels = torch.randint(0, 10, (2000,))
images = (strokes[labels] + 0.5 * torch.rand(2000, 28, 28)).clamp(0, 1)
train_loader = DataLoader(TensorDataset(images, labels), batch_size=batch_size, shuffle=True)


class Rnn(nn.Module):
    def __init__(self, in_dim, hidden_dim, n_layer, n_class):
        super(Rnn, self).__init__()
        self.n_layer = n_layer
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(in_dim, hidden_dim, n_layer)
        # batch_first=True)
        self.classifier = nn.Linear(hidden_dim, n_class)

    def forward(self, x):
        out, _ = self.lstm(x)
        out = out[:, -1, :]
        out = self.classifier(out)
        return out


model = Rnn(28, 64, 2, 10)
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=learning_rate)
for epoch in range(num_epoches):
    running_acc = 0.0
    for img, label in train_loader:
        out = model(img)
        loss = criterion(out, label)
        running_acc += (out.argmax(1) == label).float().sum().item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item(), running_acc / 2000)
